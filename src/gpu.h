// What the program may ask about GPUs. A CPU-only build (no nvcc) links gpu_none.cpp
// and reports none; a CUDA build gets these from kernels/.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace gpbzip2 {

struct GpuDevice {
  int index = 0;
  std::string name;
  size_t memory_bytes = 0;
};

bool built_with_cuda();
// Usable devices (CUDA_VISIBLE_DEVICES respected); empty when none or no driver.
std::vector<GpuDevice> list_gpus();

}  // namespace gpbzip2
