// Move-to-front by recency. The list before byte i holds the byte values by their last
// occurrence before i, most recent first, then those not seen yet in the starting order
// (the block's bytes ascending). So the position of byte c is the number of values seen
// since c was last, or, for c's first occurrence, the number seen at all plus the unseen
// bytes of the block below c. A chunk needs only where each value was last seen before
// it: per-chunk last occurrences, then a running maximum over each block's chunks. One
// warp then walks each chunk, a byte at a time, each lane holding where 8 of the 256
// values were last seen; a warp-wide sum of compares gives the position.
#include "batch.cuh"
#include "gpu_move_to_front.cuh"

namespace gpbzip2 {
namespace {

constexpr unsigned kAllLanes = 0xffffffffu;
constexpr uint32_t kWarpsPerBlock = 4;

struct Chunk {
  uint32_t block, begin, end;  // global positions [begin, end) of block `block`
};

__device__ Chunk chunk_of(const uint32_t* start, const uint32_t* chunk_start, uint32_t nb,
                          uint32_t w) {
  const uint32_t b = block_of(chunk_start, nb, w);
  const uint32_t begin = start[b] + (w - chunk_start[b]) * kMtfChunk;
  return {b, begin, min(begin + kMtfChunk, start[b + 1])};
}

// table[256 w + v] = the last position (in its block) of value v in chunk w, or -1.
__global__ void chunk_last_seen(const uint8_t* last, const uint32_t* start,
                                const uint32_t* chunk_start, uint32_t nb, uint32_t chunks,
                                int32_t* table) {
  __shared__ int32_t seen[kWarpsPerBlock][256];
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t w = blockIdx.x * kWarpsPerBlock + warp;
  if (w >= chunks) return;
  int32_t* s = seen[warp];
  for (uint32_t v = lane; v < 256; v += 32) s[v] = -1;
  __syncwarp();
  const Chunk c = chunk_of(start, chunk_start, nb, w);
  for (uint32_t i = c.begin + lane; i < c.end; i += 32)
    atomicMax(&s[last[i]], int32_t(i - start[c.block]));
  __syncwarp();
  for (uint32_t v = lane; v < 256; v += 32) table[size_t(w) * 256 + v] = s[v];
}

// One thread a (block, value): each chunk's entry becomes the last position before the
// chunk, and in_use whether the value occurs in the block at all.
__global__ void last_seen_before(const uint32_t* chunk_start, int32_t* table, uint8_t* in_use) {
  const uint32_t b = blockIdx.x, v = threadIdx.x;
  int32_t before = -1;
  for (uint32_t w = chunk_start[b]; w < chunk_start[b + 1]; w++) {
    int32_t* t = table + size_t(w) * 256 + v;
    const int32_t here = *t;
    *t = before;
    before = max(before, here);
  }
  in_use[size_t(b) * 256 + v] = before >= 0;
}

__global__ void chunk_positions(const uint8_t* last, const uint32_t* start,
                                const uint32_t* chunk_start, uint32_t nb, uint32_t chunks,
                                const int32_t* table, const uint8_t* in_use,
                                uint8_t* positions) {
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t w = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  if (w >= chunks) return;
  const Chunk c = chunk_of(start, chunk_start, nb, w);
  const int32_t base = int32_t(start[c.block]);
  // Value 32 k + lane is this lane's k-th: where it was last seen (-1: not yet), and
  // whether the block has it.
  int32_t seen[8];
  bool used[8];
#pragma unroll
  for (int k = 0; k < 8; k++) {
    seen[k] = table[size_t(w) * 256 + 32 * k + lane];
    used[k] = in_use[size_t(c.block) * 256 + 32 * k + lane] != 0;
  }
  int prev = -1;
  for (uint32_t g = c.begin; g < c.end; g += 32) {
    const uint32_t n = min(32u, c.end - g);
    const int mine = lane < n ? last[g + lane] : 0;
    uint8_t out = 0;
    for (uint32_t j = 0; j < n; j++) {
      const int byte = __shfl_sync(kAllLanes, mine, int(j));
      const int owner = byte % 32, slot = byte / 32;
      unsigned pos = 0;
      if (byte != prev) {  // the previous byte is at the front: position 0
        int32_t own = seen[0];
#pragma unroll
        for (int k = 1; k < 8; k++)
          if (k == slot) own = seen[k];
        const int32_t at = __shfl_sync(kAllLanes, own, owner);
        unsigned count = 0;
#pragma unroll
        for (int k = 0; k < 8; k++)
          count += at >= 0 ? seen[k] > at : seen[k] >= 0 || (used[k] && 32 * k + int(lane) < byte);
        pos = __reduce_add_sync(kAllLanes, count);
      }
#pragma unroll
      for (int k = 0; k < 8; k++)
        if (k == slot && int(lane) == owner) seen[k] = int32_t(g + j) - base;
      if (lane == j) out = uint8_t(pos);
      prev = byte;
    }
    if (lane < n) positions[g + lane] = out;
  }
}

}  // namespace

cudaError_t move_to_front(const uint8_t* last, const uint32_t* start, const uint32_t* chunk_start,
                          uint32_t nb, uint32_t chunks, int32_t* table, uint8_t* in_use,
                          uint8_t* positions, cudaStream_t stream) {
  const unsigned grid = (chunks + kWarpsPerBlock - 1) / kWarpsPerBlock;
  chunk_last_seen<<<grid, 32 * kWarpsPerBlock, 0, stream>>>(last, start, chunk_start, nb,
                                                             chunks, table);
  last_seen_before<<<nb, 256, 0, stream>>>(chunk_start, table, in_use);
  chunk_positions<<<grid, 32 * kWarpsPerBlock, 0, stream>>>(last, start, chunk_start, nb,
                                                             chunks, table, in_use, positions);
  return cudaGetLastError();
}

}  // namespace gpbzip2
