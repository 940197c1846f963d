// The GPU decode station: on the first visible device, a few lanes (host threads, each
// with its own stream and buffers) take batches of blocks whose symbols the CPU stations
// decoded, invert their BWT on the GPU and hand them back with their text; one lane's
// copies overlap the others' kernels. Any GPU failure sends the batch back to the CPU,
// which inverts it to the same bytes.
// A second GPU only adds its opening: on 2 H200s + 32 cores, 1.3 GB decoded in 0.83-0.97 s
// with both against 0.65-0.73 s with the first (kernels/NOTES.md).
#include <algorithm>
#include <memory>

#include "common/format.h"
#include "common/gpu.h"
#include "decompress/decode_queue.h"
#include "decompress/gpu_inverse_bwt.h"
#include "gpu_lanes.h"

namespace gpbzip2 {
namespace {

// Two lanes overlap the copies of one batch with the kernels of the other. Each lane keeps
// two batches of blocks in flight, so lanes and batch size are host memory: on an H100 +
// 16 cores, 8 MiB batches decoded as fast as 16 MiB ones in 170 MB less, and two lanes as
// fast as four in 95 MB less (one was 15% slower; 4 or 6 MiB batches 4-10%; NOTES.md).
constexpr int kLanesPerGpu = 2;
constexpr size_t kMaxBatchBytes = size_t(8) << 20;
constexpr uint32_t kMaxBatchBlocks = 256;
// Device memory left to others (and to CUB's launch needs).
constexpr double kMemoryShare = 0.8;

size_t lane_batch_bytes(const GpuDevice& d) {
  const size_t budget = size_t(double(d.memory_bytes) * kMemoryShare) / kLanesPerGpu /
                        GpuInverseBwt::kDeviceBytesPerByte;
  return std::min(budget, kMaxBatchBytes);
}

void run_lane(DecodeQueue& queue, const GpuDevice& device, GpuNotices& notices, GpuGate& gate) {
  std::unique_ptr<GpuInverseBwt> gpu;
  try {
    const size_t bytes = lane_batch_bytes(device);
    if (bytes < size_t(format::kMaxBlockBytes)) throw GpuError("too little memory");
    gpu = std::make_unique<GpuInverseBwt>(device.index, bytes, kMaxBatchBlocks);
  } catch (const std::exception& e) {
    notices.gpu_failed(device, e.what());
    const std::string why = e.what();
    gate.report(&why);
    return;
  }
  // Two batches a lane in flight: one inverting, the next filling.
  queue.add_gpu_lane(gpu->max_bytes() / size_t(format::kMaxBlockBytes), gpu->max_bytes());
  gate.report(nullptr);
  std::vector<InverseBwtBlock> blocks;
  for (;;) {
    std::vector<TaskPtr> batch = queue.pop_gpu_batch(gpu->max_blocks(), gpu->max_bytes());
    if (batch.empty()) break;
    try {
      blocks.clear();
      for (const TaskPtr& t : batch)
        blocks.push_back({t->bwt.data(), uint32_t(t->bwt.size()), t->orig_ptr});
      gpu->invert(blocks);
      for (const TaskPtr& t : batch) t->inverted = true;
    } catch (const std::exception& e) {
      // The CPUs invert what is left; a half-done batch is whole again: a failed invert
      // copies nothing back.
      queue.return_from_gpu(std::move(batch));
      queue.remove_gpu_lane();
      notices.gpu_failed(device, e.what());
      return;
    }
    queue.return_from_gpu(std::move(batch));
  }
  queue.remove_gpu_lane();
}

std::vector<std::thread> start_lanes(DecodeQueue& queue, const GpuDevice& d,
                                     const std::shared_ptr<GpuNotices>& notices,
                                     const std::shared_ptr<GpuGate>& gate) {
  queue.set_gpu_found();
  std::vector<std::thread> threads;
  for (int l = 0; l < kLanesPerGpu; l++)
    threads.emplace_back([&queue, d, notices, gate] { run_lane(queue, d, *notices, *gate); });
  return threads;
}

}  // namespace

GpuStations start_gpu_decode_stations(DecodeQueue& queue, const DecompressOptions& opts) {
  if (opts.gpu == GpuMode::Off) return {};
  auto notices =
      std::make_shared<GpuNotices>(opts.notice, "its blocks are decoded on the CPU");
  auto gate = std::make_shared<GpuGate>(kLanesPerGpu);
  if (opts.gpu == GpuMode::On) {
    std::vector<GpuDevice> devices = list_gpus();
    if (devices.empty())
      throw Error(ErrorKind::Io, "no usable GPU: no CUDA device found (or no driver)");
    return {start_lanes(queue, devices.front(), notices, gate), gate};
  }
  // Auto: listing the devices takes a while (driver start); the CPU stations work
  // meanwhile.
  std::vector<std::thread> starter;
  starter.emplace_back([&queue, notices, gate] {
    const std::vector<GpuDevice> devices = list_gpus();
    if (devices.empty() || queue.stopped()) return;
    for (auto& t : start_lanes(queue, devices.front(), notices, gate)) t.join();
  });
  return {std::move(starter), nullptr};
}

}  // namespace gpbzip2
