// The slowest blocks of an input for the rotation sort: cuts stdin into blocks as the
// compressor does and times bwt_forward on each, one thread, best of R runs.
//   block_sort_times [-1..-9] [-k TOP] [-r RUNS] < input
// Prints the TOP slowest blocks, slowest first: index, offset and length of the block's
// input bytes (compressing just those bytes gives that block alone), its run-length
// encoded size, and seconds. Lines starting with '#' are comments.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "compress/block_reader.h"
#include "compress/bwt.h"
#include "common/error.h"
#include "common/io.h"

namespace {

struct Timing {
  uint64_t index, offset, length, encoded;
  double seconds;
};

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [-1..-9] [-k TOP] [-r RUNS] < input\n", argv0);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int level = 9, top = 5, runs = 1;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] >= '1' && argv[i][1] <= '9' && !argv[i][2])
      level = argv[i][1] - '0';
    else if (!std::strcmp(argv[i], "-k") && i + 1 < argc)
      top = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "-r") && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else
      return usage(argv[0]);
  }
  if (top < 1 || runs < 1) return usage(argv[0]);

  gpbzip2::FdSource in(STDIN_FILENO);
  gpbzip2::BlockReader reader(in, level);
  gpbzip2::BwtWorkspace ws;
  gpbzip2::BwtResult result;
  gpbzip2::ByteVector scratch;
  std::vector<Timing> times;
  uint64_t offset = 0;
  double total = 0;
  try {
    for (gpbzip2::RawBlock b; reader.next(b);) {
      gpbzip2::finish_block(b, scratch);
      const std::span<const uint8_t> text = b.text();
      double best = 0;
      for (int r = 0; r < runs; r++) {
        auto t0 = std::chrono::steady_clock::now();
        gpbzip2::bwt_forward(text.data(), int32_t(text.size()), ws, result);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = r == 0 ? s : std::min(best, s);
      }
      times.push_back({b.index, offset, b.input_bytes, text.size(), best});
      offset += b.input_bytes;
      total += best;
    }
  } catch (const gpbzip2::Error& e) {
    std::fprintf(stderr, "block_sort_times: %s\n", e.what());
    return 2;
  }
  std::stable_sort(times.begin(), times.end(),
                   [](const Timing& a, const Timing& b) { return a.seconds > b.seconds; });
  std::printf("# %zu blocks at -%d, %llu input bytes, sort total %.3f s (best of %d), slowest"
              " first\n",
              times.size(), level, static_cast<unsigned long long>(offset), total, runs);
  std::printf("# index offset length encoded seconds\n");
  for (size_t i = 0; i < times.size() && i < size_t(top); i++)
    std::printf("%llu %llu %llu %llu %.4f\n", static_cast<unsigned long long>(times[i].index),
                static_cast<unsigned long long>(times[i].offset),
                static_cast<unsigned long long>(times[i].length),
                static_cast<unsigned long long>(times[i].encoded), times[i].seconds);
  return 0;
}
