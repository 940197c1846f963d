// The GPU inverse BWT, seen from the host: many blocks inverted in one batch on one
// device. CUDA-free so the station, tests and benchmarks need no CUDA headers; exists
// only in CUDA builds (kernels/).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/gpu_error.h"

namespace gpbzip2 {

// One block of a batch (kept free of C++20 types: nvcc builds the kernels as C++17): its
// BWT vector in data[0, size), replaced by its text.
struct InverseBwtBlock {
  uint8_t* data;
  uint32_t size;
  uint32_t orig_ptr;  // below size
};

class GpuInverseBwt {
 public:
  // Device memory one byte of a batch takes (vector, sort keys and values twice, links)
  // with room for CUB's scratch.
  static constexpr size_t kDeviceBytesPerByte = 24;

  // Reserves device and pinned host memory for batches of up to max_bytes in up to
  // max_blocks blocks on `device`. Throws GpuError.
  GpuInverseBwt(int device, size_t max_bytes, uint32_t max_blocks);
  ~GpuInverseBwt();
  GpuInverseBwt(const GpuInverseBwt&) = delete;
  GpuInverseBwt& operator=(const GpuInverseBwt&) = delete;

  // Replaces each block's BWT vector by its text, exactly as BlockDecoder inverts it:
  // where the rows form several cycles (a vector that is no BWT), the cycle through the
  // first row, repeated. Blocks must fit max_bytes and max_blocks, each of 1 to 2^20
  // bytes. Throws GpuError.
  void invert(const std::vector<InverseBwtBlock>& blocks);

  size_t max_bytes() const;
  uint32_t max_blocks() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpbzip2
