#include "cuda_check.h"

#include <atomic>
#include <cstdlib>
#include <string>

namespace gpbzip2 {
namespace {

long fail_at() {
  static const long n = [] {
    const char* s = std::getenv("GPBZIP2_FAIL_CUDA_CALL");
    return s ? std::strtol(s, nullptr, 10) : 0L;
  }();
  return n;
}

std::atomic<long> calls{0};

}  // namespace

void cuda_check(cudaError_t err, const char* what) {
  long n = fail_at();
  if (n > 0 && calls.fetch_add(1) + 1 == n)
    throw GpuError(std::string("injected failure (GPBZIP2_FAIL_CUDA_CALL) in ") + what);
  if (err != cudaSuccess)
    throw GpuError(std::string(cudaGetErrorString(err)) + " in " + what);
}

}  // namespace gpbzip2
