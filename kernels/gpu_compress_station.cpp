// The GPU station: on the first visible device, several lanes (host threads, each with
// its own stream and buffers) take batches of prepared blocks (run-length coded by the
// CPU stations) from the work queue, sort them on the GPU and hand them back for entropy
// coding; one lane's uploads and downloads overlap the others' sorts. Any GPU failure
// sends the batch back to the CPU, unsorted.
#include <algorithm>
#include <chrono>
#include <memory>

#include "common/format.h"
#include "common/gpu.h"
#include "compress/gpu_bwt.h"
#include "compress/work_queue.h"
#include "gpu_lanes.h"

namespace gpbzip2 {
namespace {

// Lanes overlap one batch's host work (copies in and out, the per-round count reads) and
// its late rounds, too small to fill the GPU, with the others' kernels. Twelve 6 MiB lanes
// sort fastest alone, but in the whole program, where the CPU side is the limit, four are
// as fast, open 60 ms sooner and hold 200 MB less (kernels/NOTES.md). Small batches also
// leave little at the end.
constexpr int kLanesPerGpu = 4;
constexpr size_t kMaxBatchBytes = size_t(6) << 20;
// The first sort's keys give the block id 8 bits.
constexpr uint32_t kMaxBatchBlocks = 256;
// Device memory left to others (and to CUB's launch needs).
constexpr double kMemoryShare = 0.8;

// A block passes the limit by up to 4 bytes when a run's count lands on it.
size_t block_bytes(int level) { return size_t(format::block_limit(level)) + 4; }

// Blocks in one batch of a lane on `d`.
size_t lane_batch_blocks(const GpuDevice& d, int level) {
  const size_t budget = size_t(double(d.memory_bytes) * kMemoryShare) / kLanesPerGpu /
                        GpuBwt::kDeviceBytesPerByte;
  return std::min<size_t>(kMaxBatchBlocks, std::min(budget, kMaxBatchBytes) / block_bytes(level));
}

std::unique_ptr<GpuBwt> open_lane(const GpuDevice& d, int level) {
  const size_t blocks = lane_batch_blocks(d, level);
  if (blocks == 0) throw GpuError("too little memory");
  return std::make_unique<GpuBwt>(d.index, blocks * block_bytes(level), uint32_t(blocks));
}

// One lane: opens its share of the device, then sorts batches until the queue has no
// raw work left for it. The lane joins the queue only once open; meanwhile the CPU
// stations take the blocks beyond the first batches.
void run_lane(WorkQueue& queue, const GpuDevice& device, int level, GpuNotices& notices,
              GpuGate& gate) {
  std::unique_ptr<GpuBwt> bwt;
  try {
    bwt = open_lane(device, level);
  } catch (const std::exception& e) {
    queue.gpu_open_failed(lane_batch_blocks(device, level));
    notices.gpu_failed(device, e.what());
    const std::string why = e.what();
    gate.report(&why);
    return;
  }
  const int id = queue.add_gpu_station(bwt->max_blocks());
  gate.report(nullptr);
  std::vector<BlockView> blocks;
  std::vector<std::optional<BwtResult>> sorted;
  for (;;) {
    std::vector<Job> batch = queue.pop_raw_batch(id, bwt->max_blocks());
    if (batch.empty()) break;
    auto t0 = std::chrono::steady_clock::now();
    try {
      blocks.clear();
      for (const Job& j : batch) {
        const std::span<const uint8_t> text = j.text();
        blocks.push_back({text.data(), text.size()});
      }
      bwt->sort(blocks, sorted, /*move_to_front=*/true);
      for (size_t i = 0; i < batch.size(); i++)
        if (sorted[i]) batch[i].sorted = std::move(sorted[i]);
    } catch (const GpuError& e) {
      for (Job& j : batch) j.sorted.reset();
      queue.return_from_gpu(id, std::move(batch), 0);
      queue.remove_gpu_station(id);
      notices.gpu_failed(device, e.what());
      return;
    } catch (...) {
      queue.return_from_gpu(id, std::move(batch), 0);
      queue.remove_gpu_station(id);
      queue.abort(std::current_exception());
      return;
    }
    // A sorted block is coded from the sort's result alone: its text buffer goes back to
    // the reader now rather than once coded, so the blocks waiting for a coder hold one
    // buffer each, not two.
    for (Job& j : batch)
      if (j.sorted) queue.recycle(std::move(j.raw.buffer));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    queue.return_from_gpu(id, std::move(batch), seconds);
  }
  queue.remove_gpu_station(id);
}

// The lanes of the one GPU used: the first that CUDA_VISIBLE_DEVICES lists. It sorts
// about 3 GB/s, faster than 32 cores entropy-code, so a second adds no speed, only its
// opening time: with the parallel reader, on 2 H200s + 32 cores, 1.3 GB took 1.34-1.40 s
// on both against 1.05-1.16 s on the first (kernels/NOTES.md).
std::vector<std::thread> start_lanes(WorkQueue& queue, const GpuDevice& d, int level,
                                     const std::shared_ptr<GpuNotices>& notices,
                                     const std::shared_ptr<GpuGate>& gate) {
  queue.reserve_for_gpus(kLanesPerGpu * lane_batch_blocks(d, level));
  std::vector<std::thread> threads;
  for (int l = 0; l < kLanesPerGpu; l++)
    threads.emplace_back([&queue, d, level, notices, gate] {
      run_lane(queue, d, level, *notices, *gate);
    });
  return threads;
}

}  // namespace

GpuStations start_gpu_stations(WorkQueue& queue, const CompressOptions& opts) {
  if (opts.gpu == GpuMode::Off) return {};
  auto notices =
      std::make_shared<GpuNotices>(opts.notice, "its blocks are compressed on the CPU");
  auto gate = std::make_shared<GpuGate>(kLanesPerGpu);
  const int level = opts.level;
  if (opts.gpu == GpuMode::On) {
    std::vector<GpuDevice> devices = list_gpus();
    if (devices.empty())
      throw Error(ErrorKind::Io, "no usable GPU: no CUDA device found (or no driver)");
    return {start_lanes(queue, devices.front(), level, notices, gate), gate};
  }
  // Auto: even listing the devices takes a while (driver start); the CPU stations work
  // meanwhile.
  std::vector<std::thread> starter;
  starter.emplace_back([&queue, level, notices, gate] {
    try {
      const std::vector<GpuDevice> devices = list_gpus();
      if (devices.empty()) {
        queue.no_gpu_found();
        return;
      }
      for (auto& t : start_lanes(queue, devices.front(), level, notices, gate)) t.join();
    } catch (...) {
      queue.abort(std::current_exception());
    }
  });
  return {std::move(starter), nullptr};
}

}  // namespace gpbzip2
