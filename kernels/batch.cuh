// What the kernels of both directions share about a batch: blocks laid back to back,
// block b holding global positions start[b] .. start[b+1].
#pragma once
#include <cstdint>

namespace gpbzip2 {

constexpr int kThreads = 256;

inline unsigned grid_for(uint32_t n) { return unsigned((n + kThreads - 1) / kThreads); }

// Bits needed to write x (bit_width, which C++17 lacks).
inline int bit_width(uint32_t x) { return x ? 32 - __builtin_clz(x) : 0; }

// The block holding global position i: start[] is strictly increasing, start[count] is
// the total.
__device__ inline uint32_t block_of(const uint32_t* start, uint32_t count, uint32_t i) {
  uint32_t lo = 0, hi = count;
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (start[mid] <= i) lo = mid;
    else hi = mid;
  }
  return lo;
}

}  // namespace gpbzip2
