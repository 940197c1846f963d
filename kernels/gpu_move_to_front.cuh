// bzip2's move-to-front step on the GPU, for the blocks of a sorted batch: each byte of
// the last column becomes its position in the list of byte values, which the CPU then
// codes into zero runs and Huffman symbols.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace gpbzip2 {

// Bytes a warp moves to front in order; each chunk starts from the list the bytes before
// it leave.
constexpr uint32_t kMtfChunk = 2048;

// Scratch for a batch of `bytes` in `blocks` blocks: one 256-entry table a chunk.
inline size_t mtf_table_entries(size_t bytes, uint32_t blocks) {
  return (bytes / kMtfChunk + blocks) * 256;
}

// For blocks b < nb at start[b]..start[b+1] of `last`, whose chunks are
// chunk_start[b]..chunk_start[b+1] (the host counts them, kMtfChunk bytes each):
// positions[i] = the MTF position of last[i] and in_use[256 * b + v] = whether byte v
// occurs in block b. `table` holds mtf_table_entries. Returns the launch error, if any.
cudaError_t move_to_front(const uint8_t* last, const uint32_t* start, const uint32_t* chunk_start,
                          uint32_t nb, uint32_t chunks, int32_t* table, uint8_t* in_use,
                          uint8_t* positions, cudaStream_t stream);

}  // namespace gpbzip2
