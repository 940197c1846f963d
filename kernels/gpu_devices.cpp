// Which GPUs this process may use.
#include "cuda_check.h"
#include "common/gpu.h"

namespace gpbzip2 {

bool built_with_cuda() { return true; }

std::vector<GpuDevice> list_gpus() {
  std::vector<GpuDevice> out;
  try {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    for (int i = 0; i < count; i++) {
      cudaDeviceProp prop{};
      CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
      out.push_back({i, prop.name, prop.totalGlobalMem});
    }
  } catch (const GpuError&) {
    // No driver, no device, or a device the runtime cannot open: no GPU to use.
  }
  return out;
}

size_t gpu_free_memory(int device) {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

}  // namespace gpbzip2
