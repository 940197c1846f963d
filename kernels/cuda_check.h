// Every CUDA call of the GPU station goes through CUDA_CHECK: a failure becomes a
// GpuError, which sends the work back to the CPU.
#pragma once
#include <cuda_runtime.h>

#include "compress/gpu_bwt.h"

namespace gpbzip2 {

// Throws GpuError naming `what` unless `err` is cudaSuccess. For the fallback tests,
// GPBZIP2_FAIL_CUDA_CALL=N makes the Nth checked call of the process fail (counting from
// 1, in whatever order the threads reach it).
void cuda_check(cudaError_t err, const char* what);

}  // namespace gpbzip2

#define CUDA_CHECK(call) ::gpbzip2::cuda_check((call), #call)
