// Which GPUs this process may use.
#include "cuda_check.h"
#include "common/gpu.h"

namespace gpbzip2 {

bool built_with_cuda() { return true; }

// Unchecked calls: a device the runtime cannot describe is left out, and the fault
// injection (GPBZIP2_FAIL_CUDA_CALL) counts the stations' calls alone, whatever the
// number of GPUs.
std::vector<GpuDevice> list_gpus() {
  std::vector<GpuDevice> out;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return out;  // no driver or no device
  for (int i = 0; i < count; i++) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess)
      out.push_back({i, prop.name, prop.totalGlobalMem});
  }
  return out;
}

}  // namespace gpbzip2
