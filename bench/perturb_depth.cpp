// What --perturb does to each block of an input, and what it costs:
//   perturb_depth [-1..-9] [-a] < input
// Cuts stdin into blocks as the compressor does; for each block, the longest common
// prefix of neighbouring sorted rotations (exact: libdivsufsort on the block twice, then
// Kasai's algorithm on rotations) and the GPU's doubling rounds it implies, the rule's
// estimate and its time, and for blocks the rule perturbs (every block with -a) the same
// after the flips, with the coded size and the CPU sort time both ways. Lines starting
// with '#' are comments; the last ones sum up.
#include <divsufsort.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/io.h"
#include "common/rand_table.h"
#include "compress/block_reader.h"
#include "compress/cpu_station.h"
#include "compress/perturb.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Longest common prefix of neighbouring rotations in sorted order; n for a periodic block.
uint32_t max_rotation_lcp(const std::vector<uint8_t>& t) {
  const int32_t n = int32_t(t.size());
  std::vector<uint8_t> tt(t);
  tt.insert(tt.end(), t.begin(), t.end());
  // Suffixes of tt starting before n, in order, are the rotations in order (equal ones,
  // of a periodic block, in some order: their common prefix is n either way).
  std::vector<int32_t> sa(size_t(2 * n));
  if (divsufsort(tt.data(), sa.data(), 2 * n) != 0) throw std::runtime_error("divsufsort");
  std::vector<int32_t> order, rank(static_cast<size_t>(n));
  order.reserve(size_t(n));
  for (int32_t s : sa)
    if (s < n) order.push_back(s);
  for (int32_t r = 0; r < n; r++) rank[size_t(order[size_t(r)])] = r;
  // Kasai: the rotation after i shares at least h - 1 bytes with its predecessor.
  uint32_t best = 0;
  int32_t h = 0;
  for (int32_t i = 0; i < n; i++) {
    const int32_t r = rank[size_t(i)];
    if (r == 0) {
      h = 0;
      continue;
    }
    const int32_t j = order[size_t(r - 1)];
    while (h < n && tt[size_t(i + h)] == tt[size_t(j + h)]) h++;
    best = std::max(best, uint32_t(h));
    if (h > 0) h--;
  }
  return best;
}

// The GPU's doubling rounds (kernels/gpu_bwt.cu): the first sort keys on 5 bytes (at -9,
// 6 MiB batches; also at -1), each round doubles that while some rotations still share
// the sorted prefix. A periodic block runs until the prefix covers it, then goes to the CPU.
int gpu_rounds(uint32_t lcp, size_t n) {
  const uint64_t until = lcp >= n ? n - 1 : lcp;
  int rounds = 0;
  for (uint64_t covered = 5; covered <= until; covered *= 2) rounds++;
  return rounds;
}

struct Sorted {
  uint64_t bits;
  double sort_seconds;
};

// Codes `text` as a block ready to sort (as a station prepares one).
Sorted code(gpbzip2::BlockCompressor& c, const std::vector<uint8_t>& text, uint32_t crc,
            bool randomised) {
  gpbzip2::Job job;
  job.raw.rle_bytes = text.size();
  job.raw.buffer.resize(text.size());
  std::copy(text.begin(), text.end(), job.raw.buffer.data());
  job.crc = crc;
  job.randomised = randomised;
  job.prepared = true;
  auto t0 = Clock::now();
  gpbzip2::CodedBlock out = c.compress(job);
  return {out.nbits, since(t0)};
}

}  // namespace

int main(int argc, char** argv) {
  int level = 9;
  bool all = false;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] >= '1' && argv[i][1] <= '9' && !argv[i][2]) {
      level = argv[i][1] - '0';
    } else if (!std::strcmp(argv[i], "-a")) {
      all = true;
    } else {
      std::fprintf(stderr, "usage: %s [-1..-9] [-a] < input\n", argv[0]);
      return 1;
    }
  }
  gpbzip2::FdSource in(STDIN_FILENO);
  gpbzip2::BlockReader reader(in, level);
  gpbzip2::BlockCompressor compressor;
  uint64_t blocks = 0, perturbed = 0, bytes = 0, bits_before = 0, bits_after = 0;
  int rounds_max = 0, rounds_after_max = 0, rounds_kept_max = 0;
  double rule_seconds = 0, flip_seconds = 0, coding_before = 0, coding_after = 0;
  double read_seconds = 0;
  std::printf("# block bytes lcp rounds estimate aligned perturbed lcp_after rounds_after "
              "bits bits_after rule_ms code_ms code_after_ms\n");
  try {
    gpbzip2::RawBlock raw;
    gpbzip2::ByteVector scratch;
    // The reader's and the CRC's time, for the rule's: the hook runs on the station that
    // codes the block.
    for (auto t_read = Clock::now(); reader.next(raw); t_read = Clock::now()) {
      const uint32_t crc = gpbzip2::finish_block(raw, scratch);
      const auto text = raw.text();
      const std::vector<uint8_t> b(text.begin(), text.end());
      read_seconds += since(t_read);
      const size_t n = b.size();
      // The rule's time, best of three: it takes about a millisecond a block.
      bool perturb = false;
      double rule = 1e30;
      auto t0 = Clock::now();
      for (int r = 0; r < 3; r++) {
        t0 = Clock::now();
        perturb = gpbzip2::worth_perturbing(b.data(), n);
        rule = std::min(rule, since(t0));
      }
      const uint32_t estimate = gpbzip2::estimate_longest_repeat(b.data(), n);
      const uint32_t aligned = gpbzip2::longest_flip_aligned_repeat(b.data(), n);
      const uint32_t lcp = max_rotation_lcp(b);
      const int rounds = gpu_rounds(lcp, n);
      const Sorted before = code(compressor, b, crc, false);
      uint32_t lcp_after = lcp;
      int rounds_after = rounds;
      Sorted after = before;
      if (perturb || all) {
        std::vector<uint8_t> p = b;
        t0 = Clock::now();
        gpbzip2::flip_randomised_bits(p.data(), n);  // with -a whatever the rule says
        flip_seconds += since(t0);
        lcp_after = max_rotation_lcp(p);
        rounds_after = gpu_rounds(lcp_after, n);
        after = code(compressor, p, crc, true);
      }
      std::printf("%llu %zu %u %d %u %u %d %u %d %llu %llu %.3f %.1f %.1f\n",
                  static_cast<unsigned long long>(raw.index), n, lcp, rounds, estimate, aligned,
                  int(perturb), lcp_after, rounds_after,
                  static_cast<unsigned long long>(before.bits),
                  static_cast<unsigned long long>(after.bits), rule * 1e3,
                  before.sort_seconds * 1e3, after.sort_seconds * 1e3);
      blocks++;
      perturbed += perturb;
      bytes += n;
      rule_seconds += rule;
      bits_before += before.bits;
      bits_after += perturb ? after.bits : before.bits;
      coding_before += before.sort_seconds;
      coding_after += perturb ? after.sort_seconds : before.sort_seconds;
      rounds_max = std::max(rounds_max, rounds);
      rounds_after_max = std::max(rounds_after_max, perturb ? rounds_after : rounds);
      if (!perturb) rounds_kept_max = std::max(rounds_kept_max, rounds);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perturb_depth: %s\n", e.what());
    return 2;
  }
  const double mb = double(bytes) / 1e6;
  std::printf("# blocks %llu perturbed %llu\n", static_cast<unsigned long long>(blocks),
              static_cast<unsigned long long>(perturbed));
  std::printf("# most rounds: %d before, %d after; %d in blocks left alone\n", rounds_max,
              rounds_after_max, rounds_kept_max);
  std::printf("# coded bytes %.0f -> %.0f (%+.3f%%)\n", double(bits_before) / 8,
              double(bits_after) / 8,
              bits_before ? 100.0 * (double(bits_after) - double(bits_before)) / double(bits_before)
                          : 0.0);
  std::printf("# rule %.3f ms/MB, flips and CRC of perturbed blocks %.3f ms/MB, coding on one "
              "CPU thread %.1f -> %.1f ms/MB, block reader %.3f ms/MB\n",
              rule_seconds * 1e3 / mb, flip_seconds * 1e3 / mb, coding_before * 1e3 / mb,
              coding_after * 1e3 / mb, read_seconds * 1e3 / mb);
  return 0;
}
