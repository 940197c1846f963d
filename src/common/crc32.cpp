#include "crc32.h"

#include <cstring>

#ifdef __x86_64__
#include <immintrin.h>

#include "cpu_features.h"
#endif

namespace gpbzip2 {

static Crc32Tables make_tables() {
  Crc32Tables tb{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i << 24;
    for (int k = 0; k < 8; k++) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
    tb.t[0][i] = c;
  }
  // t[k][i]: CRC of byte i followed by k zero bytes, for slicing by 16.
  for (int k = 1; k < 16; k++)
    for (uint32_t i = 0; i < 256; i++)
      tb.t[k][i] = (tb.t[k - 1][i] << 8) ^ tb.t[0][tb.t[k - 1][i] >> 24];
  return tb;
}

const Crc32Tables kCrc32 = make_tables();

uint32_t crc32_update_tables(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kCrc32.t;
  while (n >= 16) {
    uint32_t hi = crc ^ (uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]);
    crc = t[15][hi >> 24] ^ t[14][(hi >> 16) & 0xff] ^ t[13][(hi >> 8) & 0xff] ^
          t[12][hi & 0xff] ^ t[11][p[4]] ^ t[10][p[5]] ^ t[9][p[6]] ^ t[8][p[7]] ^ t[7][p[8]] ^
          t[6][p[9]] ^ t[5][p[10]] ^ t[4][p[11]] ^ t[3][p[12]] ^ t[2][p[13]] ^ t[1][p[14]] ^
          t[0][p[15]];
    p += 16;
    n -= 16;
  }
  while (n--) crc = crc32_byte(crc, *p++);
  return crc;
}

#ifdef __x86_64__
namespace {

// The CRC after n bytes is (crc * x^(8n) + M * x^32) mod P, M the bytes as a polynomial
// whose first bit is the highest power. Folding keeps four 128-bit remainders, each
// congruent mod P to the bytes its lane took so far (16-byte chunks read as big-endian
// numbers, so that bit i is the coefficient of x^i). Moving a remainder R = H * x^64 + L
// D bits up is a multiplication by x^D mod P, done as H * (x^(D+64) mod P) +
// L * (x^D mod P): two carry-less products of under 96 bits.

uint32_t x_pow_mod_p(unsigned k) {  // x^k mod P, k >= 32
  uint32_t r = 0x04C11DB7u;         // x^32 mod P
  for (unsigned i = 32; i < k; i++) r = (r & 0x80000000u) ? (r << 1) ^ 0x04C11DB7u : r << 1;
  return r;
}

struct FoldConstants {
  uint64_t by512[2] = {x_pow_mod_p(512), x_pow_mod_p(576)};  // four chunks on
  uint64_t by128[2] = {x_pow_mod_p(128), x_pow_mod_p(192)};  // one chunk on
};
const FoldConstants kFold;

const bool kHavePclmul = cpu::has_pclmul_sse41();

#define GPBZIP2_PCLMUL __attribute__((target("pclmul,sse4.1")))

GPBZIP2_PCLMUL inline __m128i load_be(const uint8_t* p) {
  const __m128i reverse = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), reverse);
}

GPBZIP2_PCLMUL inline __m128i fold(__m128i r, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00), _mm_clmulepi64_si128(r, k, 0x11));
}

// n >= 64.
GPBZIP2_PCLMUL uint32_t crc32_update_pclmul(uint32_t crc, const uint8_t* p, size_t n) {
  const __m128i k512 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kFold.by512));
  const __m128i k128 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kFold.by128));
  // The running CRC is added to the first 32 bits of the bytes.
  __m128i r0 = _mm_xor_si128(load_be(p), _mm_set_epi32(int(crc), 0, 0, 0));
  __m128i r1 = load_be(p + 16), r2 = load_be(p + 32), r3 = load_be(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; p += 64, n -= 64) {
    r0 = _mm_xor_si128(fold(r0, k512), load_be(p));
    r1 = _mm_xor_si128(fold(r1, k512), load_be(p + 16));
    r2 = _mm_xor_si128(fold(r2, k512), load_be(p + 32));
    r3 = _mm_xor_si128(fold(r3, k512), load_be(p + 48));
  }
  __m128i r = _mm_xor_si128(fold(r0, k128), r1);
  r = _mm_xor_si128(fold(r, k128), r2);
  r = _mm_xor_si128(fold(r, k128), r3);
  for (; n >= 16; p += 16, n -= 16) r = _mm_xor_si128(fold(r, k128), load_be(p));
  // R is congruent to the bytes so far: their CRC from 0 is R's, as 16 big-endian bytes.
  alignas(16) uint8_t rest[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(rest), load_be(reinterpret_cast<uint8_t*>(&r)));
  return crc32_update_tables(crc32_update_tables(0, rest, 16), p, n);
}

// Runs: the CRC after `count` copies of byte c is (crc * x^(8 count) + c * S) mod P, where
// S = x^32 (1 + x^8 + ... + x^(8 (count - 1))) mod P: two products by constants of a
// table and one Barrett reduction, whatever the count (a run piece stands for up to 255).
constexpr size_t kRunTable = 256;
struct RunConstants {
  uint32_t shift[kRunTable], sum[kRunTable];  // x^(8n) mod P and S for count n
  uint64_t mu;                                // x^64 / P
  RunConstants() {
    uint32_t power = 1, total = 0;  // x^(8n) and x^32 * (1 + ... + x^(8(n-1))), mod P
    for (size_t n = 0; n < kRunTable; n++) {
      shift[n] = power;
      sum[n] = total;
      total ^= times_x(power, 32);
      power = times_x(power, 8);
    }
    // Long division of x^64 by P = x^32 + 0x04C11DB7.
    unsigned __int128 rest = static_cast<unsigned __int128>(1) << 64;
    const unsigned __int128 p = (uint64_t(1) << 32) | 0x04C11DB7u;
    mu = 0;
    for (int bit = 64; bit >= 32; bit--)
      if (rest >> bit & 1) {
        mu |= uint64_t(1) << (bit - 32);
        rest ^= p << (bit - 32);
      }
  }
  static uint32_t times_x(uint32_t r, int k) {
    for (int i = 0; i < k; i++) r = (r & 0x80000000u) ? (r << 1) ^ 0x04C11DB7u : r << 1;
    return r;
  }
};
const RunConstants kRun;

GPBZIP2_PCLMUL inline uint64_t clmul(uint64_t a, uint64_t b) {  // products under 2^64 here
  return uint64_t(_mm_cvtsi128_si64(
      _mm_clmulepi64_si128(_mm_cvtsi64_si128(int64_t(a)), _mm_cvtsi64_si128(int64_t(b)), 0)));
}

GPBZIP2_PCLMUL uint32_t crc32_run_pclmul(uint32_t crc, uint8_t byte, size_t count) {
  const uint64_t r = clmul(crc, kRun.shift[count]) ^ clmul(byte, kRun.sum[count]);
  const uint64_t q = clmul(r >> 32, kRun.mu) >> 32;  // r / P
  return uint32_t(r ^ clmul(q, 0x04C11DB7u));
}

}  // namespace
#endif

uint32_t crc32_run(uint32_t crc, uint8_t byte, size_t count) {
#ifdef __x86_64__
  if (kHavePclmul) {
    for (; count >= kRunTable; count -= kRunTable - 1)
      crc = crc32_run_pclmul(crc, byte, kRunTable - 1);
    return crc32_run_pclmul(crc, byte, count);
  }
#endif
  uint8_t fill[256];
  std::memset(fill, byte, sizeof fill);
  for (; count > sizeof fill; count -= sizeof fill)
    crc = crc32_update_tables(crc, fill, sizeof fill);
  return crc32_update_tables(crc, fill, count);
}

uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n) {
#ifdef __x86_64__
  if (n >= 64 && kHavePclmul) return crc32_update_pclmul(crc, p, n);
#endif
  return crc32_update_tables(crc, p, n);
}

}  // namespace gpbzip2
