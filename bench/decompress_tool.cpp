// Minimal driver for benchmarks: decompresses stdin to stdout with the library.
//   decompress_tool [-n THREADS] [-t]     (-t: test only, write nothing)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpbzip2.h"

int main(int argc, char** argv) {
  gpbzip2::DecompressOptions opts;
  bool test = false;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "-t"))
      test = true;
    else if (!std::strcmp(argv[i], "-n") && i + 1 < argc)
      opts.threads = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [-n THREADS] [-t] < in.bz2 > out\n", argv[0]);
      return 1;
    }
  }
  gpbzip2::FdSource in(STDIN_FILENO);
  gpbzip2::FdSink out(STDOUT_FILENO);
  try {
    auto totals = gpbzip2::decompress_stream(in, test ? nullptr : &out, opts);
    if (totals.trailing_garbage)
      std::fprintf(stderr, "decompress_tool: trailing garbage after EOF ignored\n");
  } catch (const gpbzip2::Error& e) {
    std::fprintf(stderr, "decompress_tool: %s\n", e.what());
    return 2;
  }
  return 0;
}
