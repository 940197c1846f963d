// Compression pipeline: reader -> work queue -> stations -> ordered writer.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "block_reader.h"
#include "cpu_station.h"
#include "common/format.h"
#include "gpbzip2.h"
#include "common/gpu.h"
#include "perturb.h"
#include "stream_writer.h"

namespace gpbzip2 {

namespace {

// With GPU stations, the threads that feed everyone (reader, writer, GPU lanes opening
// and sorting; brief but on the critical path) should not wait for a core behind the
// CPU stations, so the stations run a little nicer (kernels/NOTES.md has the runs).
void run_cpu_station_nicer(WorkQueue& queue) {
#ifdef __linux__
  const int tid = int(gettid());
  setpriority(PRIO_PROCESS, id_t(tid), getpriority(PRIO_PROCESS, id_t(tid)) + 5);
#endif
  run_cpu_station(queue);
}

// Opening a GPU costs about 0.45 s of wall time however little it then sorts (driver
// start, the lanes' buffers, teardown at exit; measured on H200s), so GpuMode::Auto opens
// one only for inputs the CPU stations alone would take longer than this on. The GPU
// won from about 0.6 s of CPU work on 16 cores and 0.7-0.8 s on 32 (kernels/NOTES.md);
// where the two are close the rule leaves the GPU shut. CPU speed is taken as 15 MB/s a
// thread (-9; 12-24 measured on the machines here).
constexpr double kGpuWorthSeconds = 0.8;
constexpr double kCpuBytesPerSecondPerThread = 15e6;

uint64_t gpu_worth_bytes(int threads) {
  return uint64_t(double(threads) * kCpuBytesPerSecondPerThread * kGpuWorthSeconds);
}

// An input of one block (a small file) is compressed by the calling thread, so that small
// files compressed one after another (find -exec) pay for no thread starts and no
// hand-offs between threads.
CompressTotals compress_alone(Job& job, bool any, Sink& out, const CompressOptions& opts) {
  StreamWriter writer(out, opts.level);
  CompressTotals totals;
  if (any) {
    BlockCompressor compressor;
    writer.add(compressor.compress(job));
    totals.blocks = 1;
    totals.perturbed_blocks = job.raw.randomised;
    totals.bytes_in = job.raw.input_bytes;
    if (opts.progress) opts.progress(totals.bytes_in, writer.bytes_written());
  }
  writer.finish();
  totals.bytes_out = writer.bytes_written();
  return totals;
}

}  // namespace

int default_thread_count() { return int(std::max(1u, std::thread::hardware_concurrency())); }

CompressTotals compress_stream(Source& in, Sink& out, const CompressOptions& opts) {
  if (opts.level < format::kMinLevel || opts.level > format::kMaxLevel)
    throw Error(ErrorKind::Internal, "compression level out of range");
  BlockReader reader(in, opts.level);
  // Where a run-length coded block becomes ready to sort; --perturb acts here, before any
  // station sees the block.
  uint64_t perturbed = 0;
  auto next_block = [&](RawBlock& raw) {
    if (!reader.next(raw)) return false;
    if (opts.perturb) perturbed += perturb_if_deep(raw);
    return true;
  };
  Job job;
  bool more = next_block(job.raw);
  // GpuMode::On sorts on the GPU whatever the size.
  if (reader.at_end() && opts.gpu != GpuMode::On) return compress_alone(job, more, out, opts);

  const int threads = opts.threads > 0 ? opts.threads : default_thread_count();
  // GPU stations raise the bounds by their batch capacity once found.
  WorkQueue queue(size_t(2 * threads + 2), threads);
  // GpuMode::On must fail before any output. Auto opens the GPU at once when the input
  // is known to be large, and for a smaller one only if it grows past that. From a pipe
  // it opens once a quarter of that has been read: early enough that large inputs gain
  // about as much as from a file, at a cost of up to 0.25 s for inputs of a quarter to
  // one times that size (kernels/NOTES.md).
  const uint64_t gpu_worth = gpu_worth_bytes(threads);
  const uint64_t gpu_after = opts.input_size > 0 ? gpu_worth : gpu_worth / 4;
  std::vector<std::thread> gpu_stations;
  bool gpu_started = false;
  auto start_gpu = [&] {
    gpu_stations = start_gpu_stations(queue, opts);
    gpu_started = true;
  };
  if (opts.gpu == GpuMode::On || (opts.gpu == GpuMode::Auto && opts.input_size >= gpu_worth))
    start_gpu();
  StreamWriter writer(out, opts.level);
  CompressTotals totals;

  std::thread write_thread([&] {
    try {
      for (uint64_t i = 0;; i++) {
        auto block = queue.take(i);
        if (!block) break;
        writer.add(*block);
        totals.bytes_in += block->input_bytes;
        if (opts.progress) opts.progress(totals.bytes_in, writer.bytes_written());
      }
    } catch (...) {
      queue.abort(std::current_exception());
    }
  });
  // A station starts with each block read until there are `threads`: an input of a few
  // blocks starts no more threads than it can use.
  std::vector<std::thread> stations;
  auto start_station = [&] {
    stations.emplace_back(opts.gpu == GpuMode::Off || !built_with_cuda() ? run_cpu_station
                                                                         : run_cpu_station_nicer,
                          std::ref(queue));
  };

  uint64_t blocks = 0;
  try {
    while (more) {
      if (!queue.push_raw(std::move(job))) break;
      blocks++;
      if (stations.size() < size_t(threads)) start_station();
      if (!gpu_started && opts.gpu == GpuMode::Auto && reader.bytes_read() >= gpu_after)
        start_gpu();
      job = Job();
      job.raw.data = queue.spare_buffer();
      more = next_block(job.raw);
    }
  } catch (...) {
    queue.abort(std::current_exception());
  }
  queue.close_input(blocks);
  for (auto& t : gpu_stations) t.join();
  for (auto& t : stations) t.join();
  write_thread.join();
  if (auto err = queue.error()) std::rethrow_exception(err);
  writer.finish();
  totals.bytes_out = writer.bytes_written();
  totals.blocks = blocks;
  totals.perturbed_blocks = perturbed;
  return totals;
}

}  // namespace gpbzip2
