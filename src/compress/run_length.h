// How many bytes from p on, up to e, equal c, sixteen bytes at a time: for the reader's
// run-length coding.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace gpbzip2 {

inline size_t run_length(const uint8_t* p, const uint8_t* e, uint8_t c) {
  const uint8_t* q = p;
#ifdef __SSE2__
  const __m128i key = _mm_set1_epi8(char(c));
  for (; e - q >= 16; q += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    unsigned differ = ~unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, key))) & 0xffffu;
    if (differ) return size_t(q - p) + size_t(std::countr_zero(differ));
  }
#endif
  while (q < e && *q == c) q++;
  return size_t(q - p);
}

}  // namespace gpbzip2
