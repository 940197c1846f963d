// gpbzip2: the program. It behaves as bzip2 1.0.8 does (flags, file names, messages, exit
// codes); the library does the compressing and decompressing.
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "file_ops.h"
#include "common/gpu.h"
#include "messages.h"
#include "operations.h"
#include "options.h"

namespace gpbzip2::cli {
namespace {

// The most GPUs this run opens: one to decompress or test, and for compression what the
// largest input may want (stdin counts where it is a file).
int most_gpus(const Options& o) {
  if (o.op != OpMode::Compress) return 1;
  auto size = [](int rc, const struct stat& st) {
    return rc == 0 && S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0;
  };
  struct stat st {};
  if (o.src == SrcMode::StdinToStdout)
    return most_compress_gpus(size(fstat(STDIN_FILENO, &st), st));
  int most = 1;
  for (const auto& f : o.files)
    most = std::max(most, most_compress_gpus(size(stat(f.c_str(), &st), st)));
  return most;
}

int run(const Options& o) {
  start_run(o);
  // The driver starts every GPU it sees: it is shown those the run may use. Set before
  // any thread starts.
  if (o.gpu != GpuMode::Off && built_with_cuda()) show_first_gpus(most_gpus(o));
  if (o.gpu == GpuMode::On && list_gpus().empty()) {
    say("--gpu=on: no usable GPU%s.", built_with_cuda() ? "" : " (this build has no CUDA)");
    return 1;
  }
  set_cleanup_context(program_name(), o.noisy, int(o.files.size()));
  // As bzip2: only file-to-file work has an output worth removing on a signal.
  if (o.src == SrcMode::FilesToFiles) install_signal_handlers();

  void (*work)(const std::string*) = o.op == OpMode::Compress     ? compress_one
                                     : o.op == OpMode::Decompress ? decompress_one
                                                                  : test_one;
  if (o.src == SrcMode::StdinToStdout) {
    work(nullptr);
  } else {
    for (const auto& f : o.files) {
      note_file_started();
      work(&f);
    }
  }
  return end_run();
}

// Under an address-space limit (ulimit -v) what is reserved counts as much as what is
// used, so the limit holds more stations (station_count) with:
// - one malloc arena: each other one reserves 64 MiB;
// - 1 MiB thread stacks instead of RLIMIT_STACK's (usually 8 MiB): the threads use a few
//   KB (the test suite passes with 256 KiB).
// Without a limit nothing changes, the GPU driver's threads included.
void fit_address_space_limit() {
  constexpr size_t kStack = size_t(1) << 20;
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return;
  mallopt(M_ARENA_MAX, 1);
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return;
  size_t stack = 0;
  if (pthread_attr_getstacksize(&attr, &stack) == 0 && stack > kStack &&
      pthread_attr_setstacksize(&attr, kStack) == 0)
    pthread_setattr_default_np(&attr);
  pthread_attr_destroy(&attr);
}

}  // namespace
}  // namespace gpbzip2::cli

int main(int argc, char** argv) {
  using namespace gpbzip2::cli;
  // Blocks are 1 MB buffers made by one thread and freed by another, a hundred in flight.
  // glibc would hand each freed one back to the kernel and fault the next one in page by
  // page (the block reader ran at 600 MB/s instead of 2 GB/s): keep them in the heap.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // Nothing is trimmed, so each malloc arena keeps its own high mark, and with an arena a
  // thread (glibc allows eight a core) the marks add up: four arenas held 12-30 MB less
  // at the peak on 16 cores, with and without the GPU, in both directions, and ran as
  // fast (kernels/NOTES.md).
  mallopt(M_ARENA_MAX, 4);
  // The GPU stations' streams need no more than two hardware queues; the driver's default
  // of eight costs 40-50 MB and some 0.03 s more to open (kernels/NOTES.md). Set before
  // any thread starts; a value the user set stays.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "2", 0);
  fit_address_space_limit();
  const char* slash = argc > 0 ? std::strrchr(argv[0], '/') : nullptr;
  set_program_name(argc > 0 ? (slash ? slash + 1 : argv[0]) : "gpbzip2");
  gpbzip2::exit_program(run(parse_command_line(argc, argv)));
}
