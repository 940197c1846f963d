// Anything the GPU could not do (no device, out of memory, a failed kernel). A station
// turns it into a notice and gives its work back to the CPU. CUDA-free and C++17, so that
// the kernels (nvcc builds them as C++17) and the stations share it.
#pragma once
#include <stdexcept>

namespace gpbzip2 {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpbzip2
