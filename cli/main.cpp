#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "gpbzip2.h"

int main(int argc, char** argv) {
  gpbzip2::CompressOptions opts;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] >= '1' && argv[i][1] <= '9') opts.level = argv[i][1] - '0';
    if (!std::strncmp(argv[i], "-n", 2)) opts.threads = std::atoi(argv[i] + 2);
  }
  gpbzip2::FdSource in(STDIN_FILENO);
  gpbzip2::FdSink out(STDOUT_FILENO);
  try {
    gpbzip2::compress_stream(in, out, opts);
  } catch (const gpbzip2::Error& e) {
    std::fprintf(stderr, "gpbzip2: %s\n", e.what());
    return 2;
  }
  return 0;
}
