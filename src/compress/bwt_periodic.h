// The parts of the rotation sort that follow bzip2 for periodic blocks (v repeated k >= 2
// times), whose k equal rotations bzip2 orders as its sort happens to leave them.
// Internal to bwt*.cpp.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace gpbzip2 {

// A periodic block t = v^k (|v| = p) given also by its least rotation w, which is u^k
// for the Lyndon word u = w[0..p), and by shift: t[x] = w[(x - shift) mod n].
struct PeriodicBlock {
  const uint8_t* t;
  const uint8_t* w;  // u twice (2p bytes), after w[-1] = u's last byte
  int32_t n, p, shift;
  const int32_t* sa;  // u's rotations in sorted order (u's suffix order, u being Lyndon)
};

// bzip2 sorts blocks of this many bytes or more with its main sort first.
inline constexpr int32_t kMainSortMin = 10000;

// Whether bzip2 sorts the periodic block t (period p) with its main sort and may finish
// within the work budget: false where a bound from t's first period tells it cannot.
bool bzip2_main_sort_may_finish(const uint8_t* t, int32_t n, int32_t p);

// bzip2's main sort of the periodic block t (|t| = n < 2^24, period p), given as tt = t t
// (2n bytes), with its work budget: true, with the rotations in order[0..n), if it
// finishes within the budget; false where bzip2 gives up and uses its fallback sort.
// Only for blocks bzip2_main_sort_may_finish lets through (it also holds bzip2's size
// rule: smaller blocks go to the fallback sort alone).
bool bzip2_main_sort(const uint8_t* tt, int32_t n, int32_t p, int32_t* order);

// origPtr as bzip2's fallback sort leaves it. `spare` (8-byte aligned) is scratch for its
// bucket where it fits.
uint32_t bzip2_fallback_orig_ptr(const PeriodicBlock& b, std::vector<int32_t>& aux,
                                 uint8_t* spare, size_t spare_bytes);

// Length of the common prefix of a[0..limit) and b[0..limit), 16 bytes a step where SSE2
// is (8 elsewhere): the hard blocks are the ones with long common prefixes.
inline int32_t common_prefix(const uint8_t* a, const uint8_t* b, int32_t limit) {
  int32_t i = 0;
#ifdef __SSE2__
  for (; i + 16 <= limit; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const unsigned equal = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)));
    if (equal != 0xFFFF) return i + __builtin_ctz(~equal);
  }
#endif
  for (; i + 8 <= limit; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return i + __builtin_ctzll(x ^ y) / 8;
  }
  while (i < limit && a[i] == b[i]) i++;
  return i;
}

}  // namespace gpbzip2
