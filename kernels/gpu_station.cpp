// The GPU stations: per device, two lanes (host threads, each with its own stream and
// buffers) take batches of raw blocks from the work queue, sort them on the GPU and hand
// them back for entropy coding. Two lanes let one batch's upload and download overlap
// the other's sort. Any GPU failure sends the batch back to the CPU, unsorted.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>

#include "format.h"
#include "gpu.h"
#include "gpu_bwt.h"
#include "work_queue.h"

namespace gpbzip2 {
namespace {

constexpr int kLanesPerGpu = 2;
// A batch this large keeps the GPU busy (hundreds of kernels a batch); larger batches
// only hold more blocks back at the end of the input.
constexpr size_t kMaxBatchBytes = size_t(64) << 20;
// The first sort keys on the block id above 7 leading bytes: up to 8 bits of block id.
constexpr uint32_t kMaxBatchBlocks = 256;
// Device memory left to others (and to CUB's launch needs).
constexpr double kMemoryShare = 0.8;

struct Lane {
  GpuDevice device;
  std::unique_ptr<GpuBwt> bwt;
};

// Reports a GPU's failure once, however many of its lanes fail.
class Notices {
 public:
  explicit Notices(std::function<void(const std::string&)> notice) : notice_(std::move(notice)) {}
  void gpu_failed(const GpuDevice& d, const std::string& why) {
    std::lock_guard lk(mu_);
    if (!notice_ || !failed_.insert(d.index).second) return;
    notice_("GPU " + std::to_string(d.index) + " (" + d.name + ") failed: " + why +
            "; its blocks are compressed on the CPU");
  }

 private:
  std::mutex mu_;
  std::set<int> failed_;
  std::function<void(const std::string&)> notice_;
};

// Opens every lane it can; `why` collects the reasons for those it cannot.
std::vector<Lane> open_lanes(int level, Notices& notices, std::string& why) {
  std::vector<Lane> lanes;
  // A block passes the limit by up to 4 bytes when a run's count lands on it.
  const size_t block_bytes = size_t(format::block_limit(level)) + 4;
  for (const GpuDevice& d : list_gpus()) {
    try {
      for (int l = 0; l < kLanesPerGpu; l++) {
        size_t budget = size_t(double(gpu_free_memory(d.index)) * kMemoryShare) /
                        size_t(kLanesPerGpu - l) / GpuBwt::kDeviceBytesPerByte;
        size_t blocks = std::min<size_t>(kMaxBatchBlocks,
                                         std::min(budget, kMaxBatchBytes) / block_bytes);
        if (blocks == 0) throw GpuError("too little free memory");
        lanes.push_back({d, std::make_unique<GpuBwt>(d.index, blocks * block_bytes,
                                                     uint32_t(blocks))});
      }
    } catch (const GpuError& e) {
      why += " GPU " + std::to_string(d.index) + ": " + e.what() + ";";
      // A lane that opened keeps the device in use; a device with no lane is reported.
      if (lanes.empty() || lanes.back().device.index != d.index) notices.gpu_failed(d, e.what());
    }
  }
  if (lanes.empty() && why.empty()) why = " no CUDA device found";
  return lanes;
}

void run_lane(WorkQueue& queue, Lane& lane, Notices& notices) {
  const int id = queue.add_gpu_station(lane.bwt->max_blocks());
  std::vector<BlockView> blocks;
  std::vector<std::optional<BwtResult>> sorted;
  for (;;) {
    std::vector<Job> batch = queue.pop_raw_batch(id, lane.bwt->max_blocks());
    if (batch.empty()) break;
    auto t0 = std::chrono::steady_clock::now();
    try {
      blocks.clear();
      for (const Job& j : batch) blocks.push_back({j.raw.data.data(), j.raw.data.size()});
      lane.bwt->sort(blocks, sorted);
      for (size_t i = 0; i < batch.size(); i++)
        if (sorted[i]) batch[i].sorted = std::move(sorted[i]);
    } catch (const GpuError& e) {
      for (Job& j : batch) j.sorted.reset();
      queue.return_from_gpu(id, std::move(batch), 0);
      queue.remove_gpu_station(id);
      notices.gpu_failed(lane.device, e.what());
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

std::vector<std::thread> run_lanes(WorkQueue& queue, std::shared_ptr<std::vector<Lane>> lanes,
                                   std::shared_ptr<Notices> notices) {
  std::vector<std::thread> threads;
  for (Lane& lane : *lanes)
    threads.emplace_back([&queue, &lane, lanes, notices] { run_lane(queue, lane, *notices); });
  return threads;
}

}  // namespace

std::vector<std::thread> start_gpu_stations(WorkQueue& queue, const CompressOptions& opts) {
  if (opts.gpu == GpuMode::Off) return {};
  auto notices = std::make_shared<Notices>(opts.notice);
  const int level = opts.level;
  if (opts.gpu == GpuMode::On) {
    std::string why;
    auto lanes = std::make_shared<std::vector<Lane>>(open_lanes(level, *notices, why));
    if (lanes->empty()) throw Error(ErrorKind::Io, "no usable GPU:" + why);
    return run_lanes(queue, lanes, notices);
  }
  // Auto: opening a device takes a while; the CPU stations work meanwhile.
  std::vector<std::thread> starter;
  starter.emplace_back([&queue, level, notices] {
    try {
      std::string why;
      auto lanes = std::make_shared<std::vector<Lane>>(open_lanes(level, *notices, why));
      for (auto& t : run_lanes(queue, lanes, notices)) t.join();
    } catch (...) {
      queue.abort(std::current_exception());
    }
  });
  return starter;
}

}  // namespace gpbzip2
