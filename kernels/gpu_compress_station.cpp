// The GPU stations: on each device used, several lanes (host threads, each with its own
// stream and buffers) take batches of prepared blocks (run-length coded by the CPU
// stations) from the work queue, sort them on the GPU and hand them back for entropy
// coding; one lane's uploads and downloads overlap the others' sorts. Any GPU failure
// sends the batch back to the CPU, unsorted.
#include <algorithm>
#include <chrono>
#include <latch>
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
// stations take the blocks beyond the first batches. `tried` counts down once it opened
// or failed to.
void run_lane(WorkQueue& queue, const GpuDevice& device, int level, GpuNotices& notices,
              GpuGate& gate, std::latch& tried) {
  std::unique_ptr<GpuBwt> bwt;
  try {
    bwt = open_lane(device, level);
  } catch (const std::exception& e) {
    queue.gpu_open_failed(lane_batch_blocks(device, level));
    notices.gpu_failed(device, e.what());
    const std::string why = e.what();
    gate.report(&why);
    tried.count_down();
    return;
  }
  const int id = queue.add_gpu_station(bwt->max_blocks());
  gate.report(nullptr);
  tried.count_down();
  std::vector<BlockView> blocks;
  std::vector<std::optional<BwtResult>> sorted;
  for (;;) {
    std::vector<Job> batch = queue.pop_raw_batch(id, bwt->max_blocks());
    if (batch.empty()) break;
    auto t0 = std::chrono::steady_clock::now();
    try {
      blocks.clear();
      // Each block's result goes over its text, which a sorted block no longer needs.
      for (Job& j : batch) {
        uint8_t* text = j.raw.buffer.data();
        blocks.push_back({text, j.raw.rle_bytes, text});
      }
      bwt->sort(blocks, sorted, /*move_to_front=*/queue.gpu_moves_to_front());
      for (size_t i = 0; i < batch.size(); i++)
        if (sorted[i]) batch[i].sorted = std::move(sorted[i]);
    } catch (const GpuError& e) {
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
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    queue.return_from_gpu(id, std::move(batch), seconds);
  }
  queue.remove_gpu_station(id);
}

// The lanes of each device used, one device after the other: two H200s opened together
// took 0.05 s longer than one alone, so further devices open once the first's lanes are
// open (or failed), and only while the input goes on or none opened yet. Returns once all
// lanes ended.
void run_devices(WorkQueue& queue, const std::vector<GpuDevice>& devices, int level,
                 GpuNotices& notices, GpuGate& gate) {
  std::vector<std::unique_ptr<std::latch>> tried;
  std::vector<std::thread> lanes;
  for (const GpuDevice& d : devices) {
    if (!tried.empty()) {
      tried.back()->wait();
      if (queue.input_closed() && gate.any_opened()) break;
    }
    tried.push_back(std::make_unique<std::latch>(kLanesPerGpu));
    queue.reserve_for_gpus(kLanesPerGpu * lane_batch_blocks(d, level));
    for (int l = 0; l < kLanesPerGpu; l++)
      lanes.emplace_back([&queue, &d, level, &notices, &gate, &tried = *tried.back()] {
        run_lane(queue, d, level, notices, gate, tried);
      });
  }
  for (auto& t : lanes) t.join();
}

}  // namespace

GpuStations start_gpu_stations(WorkQueue& queue, const CompressOptions& opts, int gpus) {
  if (opts.gpu == GpuMode::Off) return {};
  auto notices =
      std::make_shared<GpuNotices>(opts.notice, "its blocks are compressed on the CPU");
  std::vector<GpuDevice> devices;
  if (opts.gpu == GpuMode::On) {
    devices = list_gpus();
    if (devices.empty())
      throw Error(ErrorKind::Io, "no usable GPU: no CUDA device found (or no driver)");
    devices.resize(std::min(devices.size(), size_t(gpus)));
  }
  // Auto lists the devices in the starter: even that takes a while (driver start), and
  // the CPU stations work meanwhile. Nothing waits at its gate.
  auto gate = std::make_shared<GpuGate>(kLanesPerGpu * int(devices.size()));
  const int level = opts.level;
  std::vector<std::thread> starter;
  starter.emplace_back([&queue, devices, gpus, level, notices, gate]() mutable {
    try {
      if (devices.empty()) {
        devices = list_gpus();
        if (devices.empty()) {
          queue.no_gpu_found();
          return;
        }
        devices.resize(std::min(devices.size(), size_t(gpus)));
      }
      run_devices(queue, devices, level, *notices, *gate);
    } catch (...) {
      queue.abort(std::current_exception());
    }
  });
  return {std::move(starter), opts.gpu == GpuMode::On ? gate : nullptr};
}

}  // namespace gpbzip2
