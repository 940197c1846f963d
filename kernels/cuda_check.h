// Every CUDA call of the GPU station goes through CUDA_CHECK: a failure becomes a
// GpuError, which sends the work back to the CPU.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "common/gpu_error.h"

namespace gpbzip2 {

// Throws GpuError naming `what` unless `err` is cudaSuccess. For the fallback tests,
// GPBZIP2_FAIL_CUDA_CALL=N makes the Nth checked call of the process fail (counting from
// 1, in whatever order the threads reach it; listing the GPUs makes none).
void cuda_check(cudaError_t err, const char* what);

}  // namespace gpbzip2

#define CUDA_CHECK(call) ::gpbzip2::cuda_check((call), #call)

namespace gpbzip2 {

// The device and pinned host memory of one GPU worker (a lane of a station), freed
// together when it goes. Allocations of 0 elements get 1, so that every pointer is valid.
class GpuMemory {
 public:
  explicit GpuMemory(int device) : device_index_(device) {}
  GpuMemory(const GpuMemory&) = delete;
  GpuMemory& operator=(const GpuMemory&) = delete;
  ~GpuMemory() {
    // Errors here only mean the device is already gone.
    cudaSetDevice(device_index_);
    for (void* p : device_mem_) cudaFree(p);
    for (void* p : host_mem_) cudaFreeHost(p);
  }
  template <typename T>
  T* device(size_t count) {
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)));
    device_mem_.push_back(p);
    return static_cast<T*>(p);
  }
  template <typename T>
  T* host(size_t count) {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, std::max<size_t>(count, 1) * sizeof(T)));
    host_mem_.push_back(p);
    return static_cast<T*>(p);
  }

 private:
  int device_index_;
  std::vector<void*> device_mem_, host_mem_;
};

}  // namespace gpbzip2
