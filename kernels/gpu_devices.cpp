// Which GPUs this process may use, and its end once it used one.
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "cuda_check.h"
#include "common/gpu.h"

namespace gpbzip2 {
namespace {

std::atomic<bool> g_driver_started{false};
pid_t g_parent = 0;
alignas(64) char g_release_stack[64 << 10];

// The child that holds the process's memory and files until the process has ended. It
// runs on the process's memory and thread-local storage, so it makes system calls only.
int release_after_parent(void*) {
  const timespec ms{0, 1000000};
  while (pid_t(syscall(SYS_getppid)) == g_parent) syscall(SYS_nanosleep, &ms, nullptr);
  syscall(SYS_exit, 0);
  return 0;
}

}  // namespace

bool built_with_cuda() { return true; }

// Unchecked calls: a device the runtime cannot describe is left out, and the fault
// injection (GPBZIP2_FAIL_CUDA_CALL) counts the stations' calls alone, whatever the
// number of GPUs.
std::vector<GpuDevice> list_gpus() {
  std::vector<GpuDevice> out;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return out;  // no driver or no device
  g_driver_started = true;
  for (int i = 0; i < count; i++) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess)
      out.push_back({i, prop.name, prop.totalGlobalMem});
  }
  return out;
}

void exit_program(int status) {
  if (!g_driver_started) std::exit(status);
  std::fflush(nullptr);
  // The child starts with every signal blocked: the program's handlers are not for it.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  g_parent = getpid();
  if (clone(release_after_parent, g_release_stack + sizeof g_release_stack, CLONE_VM | CLONE_FILES,
            nullptr) == -1)
    std::exit(status);
  // Readers of the output and of messages see their end now, not when the child ends.
  close(STDIN_FILENO);
  close(STDOUT_FILENO);
  close(STDERR_FILENO);
  _exit(status);
}

}  // namespace gpbzip2
