// Compression pipeline: reader -> work queue -> stations -> ordered writer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <thread>

#include "block_reader.h"
#include "bwt.h"
#include "cpu_station.h"
#include "common/cpu_count.h"
#include "common/format.h"
#include "gpbzip2.h"
#include "common/gpu.h"
#include "stream_writer.h"

namespace gpbzip2 {

namespace {

// Threads that search the input's regions for runs ahead of the reader (and read a
// file's), beside GPU stations: the reader alone scans at 1-2 GB/s and slows to 1.4-1.5
// there, to 0.65-0.75 from a pipe (kernels/NOTES.md). Four, where blocks refer to the
// regions: two H200s took what the reader cut at 3 GB/s with four or six alike, when the
// scouts read a file in turn; reading at their own offsets, four cut 4.5-4.9 GB/s alone
// on the H100 host (session 21).
constexpr int kReaderScouts = 4;

// Without a GPU the reader is the limit only where long runs make each byte to sort many
// bytes of input: where the CPU stations would take more than this (at their speed
// below) two scouts search ahead for it (where a GPU is coming, its four instead). On an
// H100 host's 16 cores, -9 --gpu=off, 160 MB of runs of 1-600 bytes took 0.081 s with two
// scouts, 0.089 with four and 0.100 with none, 500 MB of zeros 0.114 / 0.133 / 0.166
// (lbzip2 -n16 0.066 and 0.137), and a disk image starting with zeros (8 MB of them, then
// 2 MB of silesia, 100 times) 0.756 s against 0.870, holding 30 MB more; scouts forced
// on silesia and a source tar gained nothing (session 20).
constexpr double kReaderBytesPerSecond = 2e9;
constexpr int kRunScouts = 2;

// Opening a GPU costs time however little it then sorts (driver start, the lanes' buffers,
// the exit), though the CPU stations compress meanwhile, so GpuMode::Auto opens one only
// for inputs the CPU stations alone would take longer than this on. On an H100 + 16 cores
// and an H200 + 16 the GPU won from about 0.3 s of CPU work (kernels/NOTES.md, session 17;
// from 0.6-0.8 s when opening and closing took 0.45 s); where the two are close the rule
// leaves the GPU shut. CPU speed is taken as 15 MB/s a thread (-9; 12-24 measured on the
// machines here) of what the BWT sorts: the input after the first run-length coding, which
// turns long runs into a few bytes.
constexpr double kGpuWorthSeconds = 0.3;
constexpr double kCpuBytesPerSecondPerThread = 15e6;

uint64_t gpu_worth_bytes(int threads) {
  return uint64_t(double(threads) * kCpuBytesPerSecondPerThread * kGpuWorthSeconds);
}

// Each GPU after the first opens once the first's lanes are open, and only for a file
// with this much more to sort. Beside one, a second sorts what the reader cuts beyond
// the first's rate, but costs its opening, the driver's start of a second device and its
// memory. On 2 H200s + 32 cores, silesia -9, medians, one GPU against two: 1.3 GB
// 0.887 / 0.993 s, 5.2 GB 2.579 / 2.234 s; two pay from about 2.3 GB (kernels/NOTES.md,
// session 26; from 1 GB before the GPU sorted small groups in place).
constexpr double kSortBytesPerGpu = 2.5e9;

int gpus_for(double sort_bytes) { return 1 + int(std::min(sort_bytes / kSortBytesPerGpu, 64.0)); }

// From a pipe the reader reads a few blocks ahead before handing out the first (below),
// but only while they come this fast: from `cat` or a tar of files in the page cache four
// -9 blocks take a few ms, while a slow producer (a log, the network) would hold the first
// block's output back for several blocks.
constexpr std::chrono::milliseconds kReadAheadTime{20};

// An input of one block (a small file) is compressed by the calling thread, unless its
// sort is shared, so that small files compressed one after another (find -exec) pay for no
// thread starts and no hand-offs between threads.
CompressTotals compress_alone(Job& job, bool any, Sink& out, const CompressOptions& opts) {
  StreamWriter writer(out, opts.level);
  CompressTotals totals;
  if (any) {
    BlockCompressor compressor;
    compressor.perturb = opts.perturb;
    const CodedBlock coded = compressor.compress(job);
    writer.add(coded);
    totals.blocks = 1;
    totals.perturbed_blocks = coded.randomised;
    totals.bytes_in = job.raw.input_bytes;
    if (opts.progress) opts.progress(totals.bytes_in, writer.bytes_written());
  }
  writer.finish();
  totals.bytes_out = writer.bytes_written();
  return totals;
}

// Address space for station_count: a station maps about 10 bytes a block byte and 1.5 MB
// besides its stack (the sort's arrays in huge pages and the suffix sort's scratch, about
// 2 bytes a block byte; its share of the blocks in flight, its coder), the reader and
// writer 4 block sizes and 8 MB. Under ulimit -v on a 2-core Xeon VM, -9 needed 16 MB and
// 8 more a station, -1 12 and 3 (1 MiB stacks), before the suffix sort's scratch.
int compress_stations(const CompressOptions& opts) {
  const uint64_t block = uint64_t(format::block_limit(opts.level));
  return station_count(opts.threads, 10 * block + (uint64_t(3) << 19),
                       4 * block + (uint64_t(8) << 20));
}

// Beside a GPU the reader, its scouts, the writer and the lanes want cores of their own:
// with three CPU stations fewer than the CPUs, an H100 + 16 cores compressed 80 MB to 1.3
// GB 4-15% faster (kernels/NOTES.md, session 17). Never fewer than half the CPUs: they
// still code all that the GPU sorts. The CPUs are `threads` unless -n chose those.
int stations_beside_gpu(const CompressOptions& opts, int threads) {
  const int cpus = opts.threads > 0 ? default_thread_count() : threads;
  return std::max(1, std::min(threads, std::max(cpus / 2, cpus - 3)));
}

}  // namespace

// bzip2's first run-length coding makes 5 bytes of a run of 4 at most.
int most_compress_gpus(uint64_t input_size) {
  return input_size == 0 ? 1 : gpus_for(1.25 * double(input_size));
}

CompressTotals compress_stream(Source& in, Sink& out, const CompressOptions& opts) {
  if (opts.level < format::kMinLevel || opts.level > format::kMaxLevel)
    throw Error(ErrorKind::Internal, "compression level out of range");
  BlockReader reader(in, opts.level);
  Job job;
  bool more = reader.next(job.raw);
  const int threads = compress_stations(opts);
  // GpuMode::On sorts on the GPU whatever the size; one block large enough to share goes
  // to the stations, if they can share it.
  const bool one_block = reader.at_end() && opts.gpu != GpuMode::On;
  if (one_block && job.raw.rle_bytes < WorkQueue::kShareMinBytes)
    return compress_alone(job, more, out, opts);
  // The stations that count for sharing a sort: those on cores of their own, where -n asks
  // for more. (Counting the cores reads cgroup files: not for every small file.)
  const bool past_cores = opts.threads > 0 && threads >= WorkQueue::kShareMinStations;
  const int sharing = past_cores ? std::min(threads, default_thread_count()) : threads;
  const bool may_share = sharing >= WorkQueue::kShareMinStations &&
                         uint64_t(format::block_limit(opts.level)) >= WorkQueue::kShareMinBytes;
  if (one_block && !may_share) return compress_alone(job, more, out, opts);

  // GpuMode::On must fail before any output: the writer waits for the GPU to open, the
  // stations do not. Auto opens the GPU as soon as what it would
  // sort looks large enough: for a file, the encoded size of the blocks read so far
  // scaled to the whole file, so a large file opens it after its first block and a file
  // of long runs not at all. From a pipe it opens once a quarter of that is read: early
  // enough that large inputs gain about as much as from a file, while inputs just past it
  // (20-40 MB on an H100 + 16) end 45-85 ms later than without, waiting for the driver's
  // start; any other point only moves that band (kernels/NOTES.md, sessions 17 and 18).
  const uint64_t gpu_worth = gpu_worth_bytes(threads);
  bool gpu_started = false;
  // Blocks ordered from their period cost the CPU next to nothing (and the GPU some 18
  // doubling rounds): they do not count, and the rest of a file is taken to cost what the
  // part read did, or what its last block did where that is more (a file of such blocks
  // turning into text). Only looked at until the GPU opens.
  uint64_t by_period = 0;
  double last_rate = 0;  // the last block's bytes to sort per input byte
  auto note_block = [&](const RawBlock& b) {
    if (opts.gpu != GpuMode::Auto || gpu_started || b.input_bytes == 0) return;
    // A block that refers to the reader's regions (scouts read them) has no bytes of its
    // own yet: taken as costing what it holds.
    const bool cheap = b.pieces.empty() && !b.has_runs &&
                       orders_by_period(b.buffer.data(), int32_t(b.rle_bytes));
    by_period += cheap ? b.rle_bytes : 0;
    last_rate = cheap ? 0 : double(b.rle_bytes) / double(b.input_bytes);
  };
  // What the BWT would sort in all, for a file.
  auto sort_bytes = [&] {
    const double encoded = double(reader.rle_bytes_read() - by_period);
    const double unread = double(opts.input_size - std::min(opts.input_size, reader.bytes_read()));
    const double rate = std::max(encoded / double(reader.bytes_read()), last_rate);
    return encoded + unread * rate;
  };
  auto gpu_worth_it = [&] {
    if (opts.input_size == 0)
      return double(reader.rle_bytes_read() - by_period) >= double(gpu_worth / 4);
    return sort_bytes() >= double(gpu_worth);
  };
  note_block(job.raw);
  const bool gpu_first = opts.gpu == GpuMode::On || (opts.gpu == GpuMode::Auto && gpu_worth_it());
  // Blocks read and not yet pushed, the next to push first.
  std::deque<Job> read;
  if (more) read.push_back(std::move(job));
  // Reads blocks into `spare()` buffers until `upto` are held, the input ends or `until`.
  using Clock = std::chrono::steady_clock;
  auto read_more = [&](size_t upto, auto spare,
                       Clock::time_point until = Clock::time_point::max()) {
    while (read.size() < upto && !reader.at_end() && Clock::now() < until) {
      Job next;
      next.raw.buffer = spare();
      if (!reader.next(next.raw)) break;
      note_block(next.raw);
      read.push_back(std::move(next));
    }
  };
  // From a pipe, where blocks can be shared, the reader reads the first few before pushing
  // any: an input of no more than the queue shares from its first block is then known
  // whole when that is taken, and shared as a small file's is. Beyond that one block at a
  // time, as from a file.
  if (opts.input_size == 0 && may_share && !gpu_first)
    read_more(size_t(WorkQueue::share_below(sharing)), [] { return ByteVector(); },
              Clock::now() + kReadAheadTime);
  // About how many blocks are still to come after the next pushed: those read behind it,
  // and at the end of the input no more; else for a file its unread bytes at the rate of
  // those read (their first run-length coding's); unknown from a pipe, or from a file
  // grown past its size.
  auto blocks_coming = [&]() -> std::optional<uint64_t> {
    const uint64_t behind = read.empty() ? 0 : read.size() - 1;
    if (reader.at_end()) return behind;
    if (reader.bytes_read() == 0 || reader.bytes_read() > opts.input_size) return std::nullopt;
    const double unread = double(opts.input_size - reader.bytes_read());
    const double rate = double(reader.rle_bytes_read()) / double(reader.bytes_read());
    return behind + uint64_t(std::ceil(unread * rate / double(format::block_limit(opts.level))));
  };
  // Fewer CPU stations beside a GPU, unless none is found (or all fail). From a pipe the
  // GPU opens only after some reading: until auto has decided, those are all that start.
  // An input read whole by now is far short of that reading (a quarter of gpu_worth is
  // more than the read-ahead holds): no GPU.
  const int with_gpu = built_with_cuda() ? stations_beside_gpu(opts, threads) : threads;
  const bool auto_from_pipe = opts.gpu == GpuMode::Auto && opts.input_size == 0 && !reader.at_end();
  const int expected = gpu_first || auto_from_pipe ? with_gpu : threads;
  // GPU stations raise the bounds by their batch capacity once found.
  WorkQueue queue(size_t(2 * expected + 2), expected, sharing);
  GpuStations gpu;
  auto start_gpu = [&] {
    // From a pipe the reader reads alone, slower than one GPU sorts: one GPU.
    const int gpus = opts.input_size > 0 ? gpus_for(sort_bytes()) : 1;
    gpu = start_gpu_stations(queue, opts, gpus);
    gpu_started = true;
  };
  if (gpu_first) start_gpu();
  StreamWriter writer(out, opts.level);
  CompressTotals totals;

  std::thread write_thread([&, must_open = gpu.must_open] {
    try {
      if (must_open) must_open->wait_usable();
      for (uint64_t i = 0;; i++) {
        auto block = queue.take(i);
        if (!block) break;
        writer.add(*block);
        totals.bytes_in += block->input_bytes;
        totals.perturbed_blocks += block->randomised;
        if (opts.progress) opts.progress(totals.bytes_in, writer.bytes_written());
      }
    } catch (...) {
      queue.abort(std::current_exception());
    }
  });
  // A station starts with each block read until there are `threads` (with a GPU,
  // `with_gpu`); for an input of fewer blocks than that, where they can share its sorts
  // (work_queue.h), as many as share them start at once. Where the system gives no more
  // (an address-space limit holds their stacks), those started go on alone.
  const std::optional<uint64_t> after_first = blocks_coming();
  const bool few_blocks = may_share && after_first && 1 + *after_first < uint64_t(threads);
  std::vector<std::thread> stations;
  bool more_stations = true;
  auto stations_wanted = [&] {
    const bool beside_gpu = gpu_started ? !queue.gpus_lost() : auto_from_pipe;
    return size_t(beside_gpu ? with_gpu : threads);
  };

  // Not where a GPU is coming (its scouts start with its stations), nor under an
  // address-space limit, which the scouts' regions count against.
  const bool limited = address_space_limited();
  auto reader_bound = [&] {
    if (limited || (gpu_started && built_with_cuda() && !queue.gpus_lost())) return false;
    const double input_per_sorted = double(reader.bytes_read()) / double(reader.rle_bytes_read());
    return double(threads) * kCpuBytesPerSecondPerThread * input_per_sorted > kReaderBytesPerSecond;
  };

  uint64_t blocks = 0;
  bool scouting = false;
  try {
    while (!read.empty()) {
      const uint64_t upto = few_blocks ? std::max<uint64_t>(blocks + 1, sharing) : blocks + 1;
      const size_t wanted = std::min<size_t>(stations_wanted(), upto);
      while (more_stations && stations.size() < wanted) {
        more_stations = start_station_thread(stations, [&queue, perturb = opts.perturb] {
          run_cpu_station(queue, perturb);
        });
        if (more_stations) queue.cpu_station_added();
      }
      const std::optional<uint64_t> coming = blocks_coming();
      if (!queue.push_raw(std::move(read.front()), coming)) break;
      read.pop_front();
      blocks++;
      if (!gpu_started && opts.gpu == GpuMode::Auto && gpu_worth_it()) start_gpu();
      // Beside an open GPU the reader is the limit: scouts search the regions for it.
      if (!scouting && gpu_started && queue.gpu_stations_open()) {
        reader.start_scouts(kReaderScouts);
        scouting = true;
      }
      if (!scouting && reader_bound()) {
        reader.start_scouts(kRunScouts);
        scouting = true;
      }
      read_more(1, [&] { return queue.spare_buffer(); });
    }
  } catch (...) {
    queue.abort(std::current_exception());
  }
  queue.close_input(blocks);
  for (auto& t : gpu.threads) t.join();
  for (auto& t : stations) t.join();
  write_thread.join();
  if (auto err = queue.error()) std::rethrow_exception(err);
  writer.finish();
  totals.bytes_out = writer.bytes_written();
  totals.blocks = blocks;
  return totals;
}

}  // namespace gpbzip2
