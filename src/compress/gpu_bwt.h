// The GPU rotation sort, seen from the host: many blocks sorted in one batch on one
// device. CUDA-free so the station, tests and benchmarks need no CUDA headers; exists
// only in CUDA builds (kernels/).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bwt.h"
#include "common/gpu_error.h"

namespace gpbzip2 {

// One block of a batch (kept free of C++20 types: nvcc builds the kernels as C++17).
struct BlockView {
  const uint8_t* data;
  size_t size;
  // Where set, the block's result (its last column, or with move_to_front its MTF
  // positions: `size` bytes) goes here rather than into the BwtResult's vector, once the
  // whole batch is sorted; it may be `data` itself, a text no longer needed.
  uint8_t* result = nullptr;
};

class GpuBwt {
 public:
  // Device memory one byte of a batch takes (text, L, ranks, positions, two key buffers,
  // MTF positions and the MTF step's tables: 27.5 bytes; the large groups' flags, places
  // and gathered keys: 13; the medium groups' lists: 0.2) with room for CUB's scratch.
  static constexpr size_t kDeviceBytesPerByte = 42;

  // Reserves device and pinned host memory for batches of up to max_bytes (16 MiB at
  // most) in up to max_blocks blocks on `device`. Throws GpuError.
  GpuBwt(int device, size_t max_bytes, uint32_t max_blocks);
  ~GpuBwt();
  GpuBwt(const GpuBwt&) = delete;
  GpuBwt& operator=(const GpuBwt&) = delete;

  // out[i] = the BWT of blocks[i] as bwt_forward gives it, or nullopt where the block has
  // equal rotations (a periodic block: bzip2's order of those is the CPU's job) or is
  // empty. With move_to_front, each result holds the MTF positions of the last column
  // and the bytes in use (BwtResult::mtf, in_use) instead of the column; either goes to
  // BlockView::result instead where that is set. Throws GpuError, having then written no
  // result; blocks must fit max_bytes and max_blocks, and each under 2^20 bytes (bzip2's
  // are at most 900 kB).
  void sort(const std::vector<BlockView>& blocks, std::vector<std::optional<BwtResult>>& out,
            bool move_to_front = false);

  size_t max_bytes() const;
  uint32_t max_blocks() const;

  // What the last sort did, for benchmarks and kernels/NOTES.md.
  struct Stats {
    uint64_t bytes = 0;          // in the batch
    int first_key_bytes = 0;     // leading bytes the first sort ranks by
    int rounds = 0;              // doubling rounds after the first sort
    uint64_t keys_sorted = 0;    // over all rounds, the first sort included, small groups too
    double first_seconds = 0;    // upload and first sort, until its active count is known
    double total_seconds = 0;    // the whole call
  };
  const Stats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpbzip2
