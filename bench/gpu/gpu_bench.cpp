// Timings for bench/gpu/run.sh, through the library (not the CLI):
//   gpu_bench bwt FILE LEVEL LANES REPS BATCH_MB [perturb|sort-only]
//                                         the GPU's part alone: FILE cut into blocks as
//                                         bzip2 cuts them (perturb: as --perturb leaves
//                                         them), sorted and moved to front (sort-only:
//                                         no move-to-front step) in batches of BATCH_MB
//                                         by LANES threads; prints MB/s of block bytes
//   gpu_bench encode FILE LEVEL THREADS   the CPU side alone: blocks prepared (run-length
//                                         coding, CRC), sorted and moved to front on the
//                                         GPU first, then entropy coding timed on THREADS
//                                         threads (the ceiling where the GPU also
//                                         moves to front)
//   gpu_bench inverse FILE LEVEL LANES BATCH_BLOCKS
//                                         the GPU inverse BWT alone, in batches of
//                                         BATCH_BLOCKS by LANES threads (MB/s of block
//                                         bytes; bench/decode_times times the CPU's
//                                         stages)
//   gpu_bench compress IN OUT LEVEL THREADS auto|on|off [perturb]
//                                         whole compression (perturb: --perturb);
//                                         prints seconds and MB/s on stderr (OUT may
//                                         be /dev/stdout)
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "compress/block_reader.h"
#include "compress/cpu_station.h"
#include "common/format.h"
#include "gpbzip2.h"
#include "common/gpu.h"
#include "compress/bwt.h"
#include "compress/gpu_bwt.h"
#include "decompress/gpu_inverse_bwt.h"
#include "compress/perturb.h"

using namespace gpbzip2;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

static int bench_bwt(const char* path, int level, int lanes, int reps, size_t batch_mb,
                     bool perturb, bool move_to_front) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> input{std::istreambuf_iterator<char>(f), {}};
  MemorySource src(input);
  BlockReader reader(src, level);
  std::vector<std::vector<uint8_t>> blocks;
  size_t bytes = 0, perturbed = 0;
  ByteVector scratch;
  for (RawBlock b; reader.next(b);) {
    finish_block(b, scratch);
    const std::span<const uint8_t> text = b.text();
    bytes += text.size();
    blocks.emplace_back(text.begin(), text.end());
    if (perturb) perturbed += perturb_if_deep(blocks.back().data(), blocks.back().size());
  }
  // Batches as the station makes them: at most 256 blocks.
  const size_t block_bytes = size_t(format::block_limit(level)) + 4;
  const size_t per_batch = std::min<size_t>(256, (batch_mb << 20) / block_bytes);
  auto t_open = Clock::now();
  std::vector<std::unique_ptr<GpuBwt>> gpus;
  for (int l = 0; l < lanes; l++)
    gpus.push_back(std::make_unique<GpuBwt>(0, per_batch * block_bytes, uint32_t(per_batch)));
  std::printf("opening %d lane(s): %.3f s\n", lanes, since(t_open));
  const size_t batches = (blocks.size() + per_batch - 1) / per_batch;
  std::atomic<size_t> periodic{0};
  std::vector<GpuBwt::Stats> stats(batches);
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    std::atomic<size_t> next{0};
    auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (int l = 0; l < lanes; l++)
      threads.emplace_back([&, l] {
        std::vector<BlockView> spans;
        std::vector<std::optional<BwtResult>> out;
        for (size_t b; (b = next++) < batches;) {
          spans.clear();
          for (size_t i = b * per_batch; i < std::min(blocks.size(), (b + 1) * per_batch); i++)
            spans.push_back({blocks[i].data(), blocks[i].size()});
          gpus[size_t(l)]->sort(spans, out, move_to_front);
          if (r == 0)
            for (auto& o : out) periodic += !o;
          stats[b] = gpus[size_t(l)]->stats();
        }
      });
    for (auto& t : threads) t.join();
    best = std::min(best, since(t0));
  }
  std::printf("bwt %s level %d lanes %d batch %zu MiB: %zu blocks (%zu perturbed), %zu batches "
              "of %zu, %zu periodic, %.1f MB in %.4f s = %.0f MB/s\n",
              path, level, lanes, batch_mb, blocks.size(), perturbed, batches, per_batch,
              periodic.load(), double(bytes) / 1e6, best, double(bytes) / 1e6 / best);
  for (size_t b = 0; b < batches; b++)
    std::printf("  batch %zu: %d rounds, %d bytes a first key, %.2f keys sorted per byte, "
                "first sort %.1f ms, all %.1f ms\n",
                b, stats[b].rounds, stats[b].first_key_bytes,
                double(stats[b].keys_sorted) / double(stats[b].bytes), stats[b].first_seconds * 1e3,
                stats[b].total_seconds * 1e3);
  return 0;
}

// FILE cut into blocks, each prepared as the CPU stations prepare blocks for the GPU;
// `bytes` gets the file's size.
static std::vector<Job> prepared_jobs(const char* path, int level, size_t& bytes) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> input{std::istreambuf_iterator<char>(f), {}};
  bytes = input.size();
  MemorySource src(input);
  BlockReader reader(src, level);
  std::vector<Job> jobs;
  ByteVector scratch;
  for (Job j; reader.next(j.raw); j = Job()) {
    j.crc = finish_block(j.raw, scratch);
    j.prepared = true;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

static int bench_encode(const char* path, int level, int threads) {
  size_t input_bytes = 0;
  std::vector<Job> jobs = prepared_jobs(path, level, input_bytes);
  const size_t block_bytes = size_t(format::block_limit(level)) + 4;
  const size_t per_batch = std::min<size_t>(256, (size_t(16) << 20) / block_bytes);
  GpuBwt gpu(0, per_batch * block_bytes, uint32_t(per_batch));
  std::vector<std::optional<BwtResult>> out;
  for (size_t b = 0; b < jobs.size(); b += per_batch) {
    std::vector<BlockView> views;
    // The MTF positions go over each block's text, as the GPU station has them.
    for (size_t i = b; i < std::min(jobs.size(), b + per_batch); i++) {
      uint8_t* text = jobs[i].raw.buffer.data();
      views.push_back({text, jobs[i].raw.rle_bytes, text});
    }
    gpu.sort(views, out, /*move_to_front=*/true);
    for (size_t i = 0; i < out.size(); i++) jobs[b + i].sorted = std::move(out[i]);
  }
  // What a CPU station does with each block (periodic ones are sorted on the CPU here).
  std::atomic<size_t> next{0};
  auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; t++)
    pool.emplace_back([&] {
      BlockCompressor compressor;
      for (size_t i; (i = next++) < jobs.size();) compressor.compress(jobs[i]);
    });
  for (auto& t : pool) t.join();
  double s = since(t0);
  std::printf("encode level %d threads %d: %.1f MB in %.3f s = %.0f MB/s\n", level, threads,
              double(input_bytes) / 1e6, s, double(input_bytes) / 1e6 / s);
  return 0;
}

static int bench_inverse(const char* path, int level, int lanes, size_t per_batch) {
  size_t input_bytes = 0;
  std::vector<Job> jobs = prepared_jobs(path, level, input_bytes);
  std::vector<std::vector<uint8_t>> texts;
  for (const Job& j : jobs) texts.emplace_back(j.text().begin(), j.text().end());
  // Each block's BWT vector (on all cores).
  std::vector<BwtResult> bwt(jobs.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::thread::hardware_concurrency(); t++)
    pool.emplace_back([&] {
      BwtWorkspace ws;
      for (size_t i; (i = next++) < jobs.size();)
        bwt_forward(texts[i].data(), int32_t(texts[i].size()), ws, bwt[i]);
    });
  for (auto& t : pool) t.join();
  size_t bytes = 0;
  for (auto& t : texts) bytes += t.size();
  const double mb = double(bytes) / 1e6;

  size_t most = 0;
  for (size_t b = 0; b < jobs.size(); b += per_batch) {
    size_t sum = 0;
    for (size_t i = b; i < std::min(jobs.size(), b + per_batch); i++) sum += bwt[i].last.size();
    most = std::max(most, sum);
  }
  auto t_open = Clock::now();
  std::vector<std::unique_ptr<GpuInverseBwt>> gpus;
  for (int l = 0; l < lanes; l++)
    gpus.push_back(std::make_unique<GpuInverseBwt>(0, most, uint32_t(per_batch)));
  std::printf("opening %d lane(s): %.3f s\n", lanes, since(t_open));
  const size_t batches = (jobs.size() + per_batch - 1) / per_batch;
  for (int rep = 0; rep < 3; rep++) {
    std::vector<std::vector<uint8_t>> vec(jobs.size());
    for (size_t i = 0; i < jobs.size(); i++) vec[i] = bwt[i].last;
    next = 0;
    auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (int l = 0; l < lanes; l++)
      threads.emplace_back([&, l] {
        std::vector<InverseBwtBlock> blocks;
        for (size_t b; (b = next++) < batches;) {
          blocks.clear();
          for (size_t i = b * per_batch; i < std::min(jobs.size(), (b + 1) * per_batch); i++)
            blocks.push_back({vec[i].data(), uint32_t(vec[i].size()), bwt[i].orig_ptr});
          gpus[size_t(l)]->invert(blocks);
        }
      });
    for (auto& t : threads) t.join();
    const double s = since(t0);
    bool same = true;
    for (size_t i = 0; i < jobs.size(); i++) same = same && vec[i] == texts[i];
    std::printf("gpu inverse BWT, %d lane(s), %zu blocks a batch: %.1f MB in %.4f s = %.0f MB/s%s\n",
                lanes, per_batch, mb, s, mb / s, same ? "" : " (TEXT DIFFERS)");
  }
  return 0;
}

static int bench_compress(const char* in_path, const char* out_path, int level, int threads,
                          const std::string& gpu, bool perturb) {
  int in = open(in_path, O_RDONLY);
  int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0) {
    std::perror("open");
    return 1;
  }
  FdSource src(in);
  FdSink sink(out);
  CompressOptions o;
  o.level = level;
  o.threads = threads;
  o.gpu = gpu == "on" ? GpuMode::On : gpu == "off" ? GpuMode::Off : GpuMode::Auto;
  o.perturb = perturb;
  o.input_size = uint64_t(lseek(in, 0, SEEK_END));
  lseek(in, 0, SEEK_SET);
  o.notice = [](const std::string& s) { std::fprintf(stderr, "notice: %s\n", s.c_str()); };
  auto t0 = Clock::now();
  CompressTotals t = compress_stream(src, sink, o);
  double s = since(t0);
  close(in);
  close(out);
  std::fprintf(stderr,
               "compress level %d threads %d gpu %s: %.1f MB in %.3f s = %.0f MB/s, %llu of %llu "
               "blocks perturbed\n",
               level, threads, gpu.c_str(), double(t.bytes_in) / 1e6, s,
               double(t.bytes_in) / 1e6 / s, static_cast<unsigned long long>(t.perturbed_blocks),
               static_cast<unsigned long long>(t.blocks));
  return 0;
}

int main(int argc, char** argv) {
  // As the CLI does (cli/main.cpp): freed block buffers stay in the heap.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  try {
    // An optional last word "perturb" does what --perturb does; "sort-only" (bwt) leaves
    // out the move-to-front step.
    const char* word = argc == 8 ? argv[7] : "";
    const bool perturb = !std::strcmp(word, "perturb");
    const bool sort_only = !std::strcmp(word, "sort-only");
    const bool args7 = argc == 7 || perturb;
    if ((args7 || sort_only) && !std::strcmp(argv[1], "bwt"))
      return bench_bwt(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                       size_t(std::atoi(argv[6])), perturb, !sort_only);
    if (argc == 5 && !std::strcmp(argv[1], "encode"))
      return bench_encode(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    if (argc == 6 && !std::strcmp(argv[1], "inverse"))
      return bench_inverse(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), size_t(std::atoi(argv[5])));
    if (args7 && !std::strcmp(argv[1], "compress"))
      return bench_compress(argv[2], argv[3], std::atoi(argv[4]), std::atoi(argv[5]), argv[6],
                            perturb);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_bench: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: see bench/gpu/gpu_bench.cpp\n");
  return 2;
}
