#include "block_encoder.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __x86_64__
#include <immintrin.h>
#endif

#include "common/cpu_features.h"
#include "common/error.h"
#include "common/format.h"
#include "huffman.h"

namespace gpbzip2 {
namespace {

using format::kGroupSize;
using format::kMaxAlphaSize;
using format::kMaxGroups;

typedef uint16_t CostLanes __attribute__((vector_size(16)));

struct SymbolStats {
  int32_t count = 0;  // symbols written to ws.symbols, EOB included
  int alpha = 0;      // symbols in use + RUNA/RUNB + EOB - 1
  int32_t freq[kMaxAlphaSize] = {};
};

// bzip2 writes a run of z zeros as z+1 in bijective base 2, digits RUNA=0 and RUNB=1,
// least significant first, leaving out the leading 1: the digits are the bits of z+1.
// Eight digits are stored unconditionally (the output has kSymbolPad spare), so that runs
// under 511 take no branch, and z = 0 writes none.
inline uint16_t* put_zeros(uint16_t* w, uint32_t z) {
  const uint32_t x = z + 1;
  const int digits = std::bit_width(x) - 1;
#ifdef __SSE2__
  const __m128i bits = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
  const __m128i set = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16(short(x)), bits), bits);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(w), _mm_srli_epi16(set, 15));
#else
  for (int k = 0; k < 8; k++) w[k] = uint16_t((x >> k) & 1);
#endif
  if (digits > 8) [[unlikely]]
    for (int k = 8; k < digits; k++) w[k] = uint16_t((x >> k) & 1);
  return w + digits;
}

// The MTF list of byte values. move() takes a value not at the front to the front and
// returns its old position.
#ifdef __SSE2__
// Six in seven symbols sit within the first 32 entries, which live in registers: a compare
// per register finds the symbol, a shift and a blend per register move it, and no memory
// round trip lies on the chain from one symbol to the next. Further on, 16-byte steps
// search the array and then shift it from the top down.
class MtfList {
 public:
  // Works on the caller's array, which holds the initial order and has 16-byte alignment.
  explicit MtfList(uint8_t* order) : order_(order) {
    for (int r = 0; r < kRegs; r++)
      head_[r] = _mm_load_si128(reinterpret_cast<const __m128i*>(order + 16 * r));
  }
  int move(uint8_t c) {
    const __m128i key = _mm_set1_epi8(char(c));
    const __m128i ones = _mm_set1_epi32(-1);
    uint64_t hit = 0;
    __m128i old[kRegs];
    __m128i carry = _mm_cvtsi32_si128(c);
    __m128i before = ones;  // per 64-bit lane: no match in the registers before this one
    for (int r = 0; r < kRegs; r++) {
      old[r] = head_[r];
      const __m128i eq = _mm_cmpeq_epi8(old[r], key);
      hit |= uint64_t(unsigned(_mm_movemask_epi8(eq))) << (16 * r);
      // The register a byte on, taking in the last of the one before.
      const __m128i shifted = _mm_or_si128(_mm_slli_si128(old[r], 1), carry);
      carry = _mm_srli_si128(old[r], 15);
      // Entries up to the match take their left neighbour, the rest stay. The mask comes
      // from the compare without leaving the vector unit (a move mask, bit scan and
      // table load made the chain from one symbol to the next twice as long): per 64-bit
      // lane, eq | (eq - 1) sets the bytes up to the match, or all bytes where it has
      // none, and lanes after one with the match are cleared.
      const __m128i upto = _mm_or_si128(eq, _mm_add_epi64(eq, ones));
      __m128i none = _mm_cmpeq_epi32(eq, _mm_setzero_si128());
      none = _mm_and_si128(none, _mm_shuffle_epi32(none, 0xb1));  // lanes without the match
      const __m128i moved =
          _mm_and_si128(_mm_and_si128(upto, before), _mm_unpacklo_epi64(ones, none));
      head_[r] = _mm_or_si128(_mm_and_si128(moved, shifted), _mm_andnot_si128(moved, old[r]));
      before = _mm_and_si128(before, _mm_and_si128(none, _mm_shuffle_epi32(none, 0x4e)));
    }
    if (hit) [[likely]]
      return std::countr_zero(hit);
    // Not in the registers, which have all moved on a byte: the byte pushed out of the
    // last one goes to the array, whose entries up to the symbol move on too.
    int j = kHead;
    unsigned far;
    for (;; j += 16) {
      __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(order_ + j));
      far = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, key)));
      if (far) break;
    }
    j += std::countr_zero(far);
    // The array's head gets the registers' old contents first. Each load reads bytes that
    // no store in the loop has written yet; the last store puts entries 0..15 a byte on.
    for (int r = 0; r < kRegs; r++)
      _mm_store_si128(reinterpret_cast<__m128i*>(order_ + 16 * r), old[r]);
    for (int p = j - 16; p > 0; p -= 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(order_ + p));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(order_ + p + 1), v);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(order_ + 1), old[0]);
    return j;
  }

 private:
  static constexpr int kRegs = 2, kHead = 16 * kRegs;
  __m128i head_[kRegs];
  uint8_t* order_;  // entries kHead.. are current; the head is in head_
};
#else
// Most symbols sit within the first eight entries, so those are searched and shifted as
// one 64-bit word; the rest uses memchr and memmove.
class MtfList {
 public:
  explicit MtfList(uint8_t* order) : order_(order) {}
  int move(uint8_t c) {
    if constexpr (std::endian::native == std::endian::little) {
      constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
      uint64_t w;
      std::memcpy(&w, order_, 8);
      uint64_t x = w ^ (kOnes * c);
      uint64_t hit = (x - kOnes) & ~x & kHigh;  // the lowest flagged byte is exact
      if (hit) {
        int j = std::countr_zero(hit) >> 3;
        uint64_t moved = j == 7 ? ~0ull : (uint64_t(1) << (8 * (j + 1))) - 1;
        w = (w & ~moved) | ((w << 8) & moved) | c;
        std::memcpy(order_, &w, 8);
        return j;
      }
    }
    int j = int(static_cast<const uint8_t*>(std::memchr(order_, c, 256)) - order_);
    std::memmove(order_ + 1, order_, size_t(j));
    order_[0] = c;
    return j;
  }

 private:
  uint8_t* order_;
};
#endif

// Bit i: p[i] differs from q[i], over 64 bytes.
inline uint64_t differ64(const uint8_t* p, const uint8_t* q) {
#ifdef __SSE2__
  uint64_t same = 0;
  for (int k = 0; k < 4; k++) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k));
    same |= uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)))) << (16 * k);
  }
  return ~same;
#else
  uint64_t bits = 0;
  for (int i = 0; i < 64; i++) bits |= uint64_t(p[i] != q[i]) << i;
  return bits;
#endif
}

// Bit i: last[base + i] differs from the byte before it (for position 0: from `first`,
// the list's front), so a symbol other than 0 is coded there. Bits at or past n are clear.
inline uint64_t run_heads(const uint8_t* last, int32_t n, int32_t base, uint8_t first) {
  if (base > 0 && n - base >= 64) return differ64(last + base, last + base - 1);
  uint64_t heads = 0;
  const int32_t end = std::min(n - base, 64);
  for (int32_t i = 0; i < end; i++) {
    const uint8_t before = base + i == 0 ? first : last[base + i - 1];
    heads |= uint64_t(last[base + i] != before) << i;
  }
  return heads;
}

// RUNA and RUNB among [p, e) added to freq, counted in a pass of their own: cheaper than
// per run from its digits.
void count_run_digits(const uint16_t* p, const uint16_t* e, int32_t* freq) {
  int32_t a = 0, b = 0;
  for (; p < e; p++) {
    a += *p == format::kRunA;
    b += *p == format::kRunB;
  }
  freq[format::kRunA] += a;
  freq[format::kRunB] += b;
}

// The smallest byte of last[0, n), n > 0.
inline uint8_t smallest(const uint8_t* last, int32_t n) {
  int32_t i = 0;
  uint8_t lo = 255;
#ifdef __SSE2__
  if (n >= 16) {
    __m128i m = _mm_set1_epi8(char(0xff));
    for (; n - i >= 16; i += 16)
      m = _mm_min_epu8(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(last + i)));
    m = _mm_min_epu8(m, _mm_srli_si128(m, 8));
    m = _mm_min_epu8(m, _mm_srli_si128(m, 4));
    m = _mm_min_epu8(m, _mm_srli_si128(m, 2));
    m = _mm_min_epu8(m, _mm_srli_si128(m, 1));
    lo = uint8_t(_mm_cvtsi128_si32(m));
  }
#endif
  for (; i < n; i++) lo = std::min(lo, last[i]);
  return lo;
}

// bzip2's list starts with the bytes in use, ascending. Finding those would take a pass
// over the block of its own, so the list starts with all 256 values instead: the smallest
// byte (the front, which only the block's first run can use), then the rest ascending.
// Bytes never used never move, so they lie ahead of a used byte c only until c's first
// move to the front, and then exactly the unused ones below c do: that first symbol of
// each byte is corrected afterwards, when the pass has found the bytes in use. (Byte
// values rather than ranks in the list keep the search free of translation.)
template <class List>
SymbolStats move_to_front(const uint8_t* last, int32_t n, bool* in_use, uint16_t* out) {
  SymbolStats st;
  const uint8_t first = smallest(last, n);
  alignas(16) uint8_t order[256];
  order[0] = first;
  for (int c = 0, k = 1; c < 256; c++)
    if (c != first) order[k++] = uint8_t(c);
  List list(order);
  std::fill(in_use, in_use + 256, false);
  in_use[first] = true;
  int32_t first_move[256];  // where in `out` each byte's first symbol went

  uint16_t* w = out;
  // The symbols other than 0 are found from a bitmap of where the byte changes, and the
  // zero run before each is written without a branch (none where it is empty): a branch
  // on "does a run follow?" was mispredicted often, and each miss threw away the MTF
  // work in flight.
  int32_t done = 0;  // bytes coded so far
  for (int32_t base = 0; base < n; base += 64) {
    for (uint64_t heads = run_heads(last, n, base, first); heads; heads &= heads - 1) {
      const int32_t q = base + std::countr_zero(heads);
      w = put_zeros(w, uint32_t(q - done));
      done = q + 1;
      const uint8_t c = last[q];
      if (!in_use[c]) [[unlikely]] {
        in_use[c] = true;
        first_move[c] = int32_t(w - out);
      }
      const int j = list.move(c);
      *w++ = uint16_t(j + 1);
      st.freq[j + 1]++;
    }
  }
  w = put_zeros(w, uint32_t(n - done));
  int used = 0;
  for (int c = 0; c < 256; c++) {
    if (!in_use[c]) continue;
    if (c != first) {
      const uint16_t unused_below = uint16_t(c - used);
      uint16_t& v = out[first_move[c]];
      st.freq[v]--;
      v = uint16_t(v - unused_below);
      st.freq[v]++;
    }
    used++;
  }
  st.alpha = used + 2;
  const uint16_t eob = uint16_t(used + 1);
  *w++ = eob;
  st.freq[eob]++;
  st.count = int32_t(w - out);
  count_run_digits(out, w, st.freq);
  return st;
}

#ifdef __x86_64__
#define GPBZIP2_AVX512 __attribute__((target("avx512bw,avx512vbmi")))
// The whole list in four 64-byte registers, no memory on the chain from one symbol to the
// next. A register holds its 64 entries from byte 63 down, so that when the symbol is at
// byte b, the entries that stay are bytes 0..b-1, a mask of one add (m - 1) from the
// compare's; the others take the list shifted a byte down, a permute that does not wait
// for the compare. Nine in ten symbols sit in the first register; further on, the
// registers before the symbol's move whole, each taking in the last entry of the one
// before.
class MtfList512 {
 public:
  GPBZIP2_AVX512 explicit MtfList512(const uint8_t* order) {
    uint8_t reversed[256];
    for (int i = 0; i < 256; i++) reversed[i] = order[(i | 63) - (i & 63)];
    for (int r = 0; r < 4; r++) list_[r] = _mm512_loadu_si512(reversed + 64 * r);
  }
  GPBZIP2_AVX512 int move(uint8_t c) {
    const __m512i key = _mm512_set1_epi8(char(c));
    const __mmask64 hit = _mm512_cmpeq_epi8_mask(list_[0], key);
    const __m512i moved = down(list_[0], key);
    if (hit) [[likely]] {
      list_[0] = _mm512_mask_blend_epi8(below(hit), moved, list_[0]);
      return std::countl_zero(hit);
    }
    __m512i before = list_[0];
    list_[0] = moved;
    for (int r = 1; r < 4; r++) {
      const __m512i old = list_[r];
      const __mmask64 m = _mm512_cmpeq_epi8_mask(old, key);
      if (m) {
        list_[r] = _mm512_mask_blend_epi8(below(m), down(old, before), old);
        return 64 * r + std::countl_zero(m);
      }
      list_[r] = down(old, before);
      before = old;
    }
    __builtin_unreachable();
  }

 private:
  // Byte i takes byte i + 1 of `v`, byte 63 byte 0 of `before` (the entry before v's
  // first; of a key for the first register, c itself).
  GPBZIP2_AVX512 static __m512i down(__m512i v, __m512i before) {
    const __m512i next = _mm512_set_epi8(
        64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
        42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21,
        20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    return _mm512_permutex2var_epi8(v, next, before);
  }
  // The bits below the one set in m, computed in mask registers: with a round trip
  // through general registers on the chain from one symbol to the next, this list was no
  // faster than the SSE2 one.
  GPBZIP2_AVX512 static __mmask64 below(__mmask64 m) {
    return _kadd_mask64(m, __mmask64(~0ull));
  }
  __m512i list_[4];
};

// flatten: the pass is inlined here with MtfList512's moves, so that the list stays in
// registers.
GPBZIP2_AVX512 __attribute__((flatten)) SymbolStats move_to_front_avx512(const uint8_t* last,
                                                                          int32_t n, bool* in_use,
                                                                          uint16_t* out) {
  return move_to_front<MtfList512>(last, n, in_use, out);
}
#endif

// MtfList512 where the CPU has it (on the 2-core AMD the whole encoder's time fell by a
// quarter), else the SSE2 list.
#ifdef __x86_64__
bool has_list512() {
  static const bool avx512 = cpu::has_avx512_vbmi();
  return avx512;
}
#endif

SymbolStats move_to_front(const uint8_t* last, int32_t n, bool* in_use, uint16_t* out) {
#ifdef __x86_64__
  if (has_list512()) return move_to_front_avx512(last, n, in_use, out);
#endif
  return move_to_front<MtfList>(last, n, in_use, out);
}

// A shared block's move to front is cut into stretches that each start where the byte
// changes, so that no zero run crosses two; a first pass finds each stretch's symbol
// count and where each byte's last run begins in it, which gives the bytes in use and the
// MTF list as it stands where each stretch starts (the bytes seen, latest first, then the
// rest as the list began); a second codes every stretch from its list at once. The
// symbols are move_to_front's.
constexpr int32_t kLeastStretch = 16384;

struct Stretch {
  int32_t begin = 0, end = 0;
  int32_t symbols = 0;          // zero-run digits and other symbols coded for it
  int32_t last_head[256];       // where each byte's last run begins in it, -1 if none
  int32_t freq[kMaxAlphaSize];  // its symbols' counts
};

// put_zeros, storing nothing at or past `limit`, where the next stretch's symbols go.
inline uint16_t* put_zeros_before(uint16_t* w, uint32_t z, const uint16_t* limit) {
  if (limit - w >= 8) return put_zeros(w, z);
  const uint32_t x = z + 1;
  const int digits = std::bit_width(x) - 1;
  for (int k = 0; k < digits; k++) w[k] = uint16_t((x >> k) & 1);
  return w + digits;
}

// Bits of the positions in [base, base + 64) under `end` that begin a run (run_heads).
inline uint64_t heads_before(const uint8_t* last, int32_t n, int32_t base, int32_t end,
                             uint8_t first) {
  const uint64_t heads = run_heads(last, n, base, first);
  return end - base >= 64 ? heads : heads & ((uint64_t(1) << (end - base)) - 1);
}

void survey_stretch(const uint8_t* last, int32_t n, uint8_t first, Stretch& s) {
  std::fill(s.last_head, s.last_head + 256, -1);
  if (s.begin == 0) s.last_head[last[0]] = 0;  // the list's front, moved there or not
  int32_t done = s.begin, symbols = 0;
  for (int32_t base = s.begin; base < s.end; base += 64)
    for (uint64_t heads = heads_before(last, n, base, s.end, first); heads; heads &= heads - 1) {
      const int32_t q = base + std::countr_zero(heads);
      symbols += std::bit_width(uint32_t(q - done) + 1);  // the run's digits and the symbol
      done = q + 1;
      s.last_head[last[q]] = q;
    }
  s.symbols = symbols + std::bit_width(uint32_t(s.end - done) + 1) - 1;
}

// Codes stretch s into its s.symbols places at `out`, from the list `order` (which MtfList
// works on); the bytes in `fresh` move for the first time in the block here, and their
// first symbol leaves out the unused bytes below them, which the list holds.
template <class List>
uint16_t* code_stretch(const uint8_t* last, int32_t n, uint8_t first, uint8_t* order,
                       bool* fresh, const uint16_t* unused_below, Stretch& s, uint16_t* out) {
  List list(order);
  std::fill(s.freq, s.freq + kMaxAlphaSize, 0);
  const uint16_t* const limit = out + s.symbols;
  uint16_t* w = out;
  int32_t done = s.begin;
  for (int32_t base = s.begin; base < s.end; base += 64)
    for (uint64_t heads = heads_before(last, n, base, s.end, first); heads; heads &= heads - 1) {
      const int32_t q = base + std::countr_zero(heads);
      w = put_zeros_before(w, uint32_t(q - done), limit);
      done = q + 1;
      const uint8_t c = last[q];
      uint16_t v = uint16_t(list.move(c) + 1);
      if (fresh[c]) [[unlikely]] {
        fresh[c] = false;
        v = uint16_t(v - unused_below[c]);
      }
      *w++ = v;
      s.freq[v]++;
    }
  w = put_zeros_before(w, uint32_t(s.end - done), limit);
  count_run_digits(out, w, s.freq);
  return w;
}

#ifdef __x86_64__
GPBZIP2_AVX512 __attribute__((flatten)) uint16_t* code_stretch_avx512(
    const uint8_t* last, int32_t n, uint8_t first, uint8_t* order, bool* fresh,
    const uint16_t* unused_below, Stretch& s, uint16_t* out) {
  return code_stretch<MtfList512>(last, n, first, order, fresh, unused_below, s, out);
}
#endif

SymbolStats move_to_front_shared(const uint8_t* last, int32_t n, bool* in_use, uint16_t* out,
                                 const Team& team) {
  const uint8_t first = smallest(last, n);
  // Stretches begin about evenly, each at the next change of byte.
  const int32_t most = std::clamp(n / kLeastStretch, 1, 2 * std::max(1, team.threads));
  std::vector<Stretch> stretches(1);
  for (int32_t k = 1; k < most; k++) {
    int32_t b = std::max(int32_t(int64_t(n) * k / most), stretches.back().begin + 1);
    while (b < n && last[b] == last[b - 1]) b++;
    if (b >= n) break;
    stretches.back().end = b;
    stretches.emplace_back().begin = b;
  }
  stretches.back().end = n;
  const size_t count = stretches.size();
  team.run(count, [&](size_t k) { survey_stretch(last, n, first, stretches[k]); });

  // The bytes in use; where each stretch's symbols go; the bytes seen before each stretch,
  // by where their last run began (-1: not yet).
  std::vector<int32_t> offset(count + 1, 0), seen(count * 256);
  std::fill(in_use, in_use + 256, false);
  in_use[first] = true;
  for (size_t k = 0; k < count; k++) {
    offset[k + 1] = offset[k] + stretches[k].symbols;
    int32_t* const before = seen.data() + 256 * k;  // the row before it is stretch k - 1's
    for (int c = 0; c < 256; c++) {
      before[c] = k == 0 ? -1 : std::max(before[c - 256], stretches[k - 1].last_head[c]);
      in_use[c] |= stretches[k].last_head[c] >= 0;
    }
  }
  uint16_t unused_below[256];
  int used = 0;
  for (int c = 0; c < 256; c++) {
    unused_below[c] = uint16_t(c - used);
    used += in_use[c];
  }

  team.run(count, [&](size_t k) {
    const int32_t* const before = seen.data() + 256 * k;
    alignas(64) uint8_t order[256];
    bool fresh[256];
    int seen_count = 0;
    for (int c = 0; c < 256; c++) {
      if (before[c] >= 0) order[seen_count++] = uint8_t(c);
      fresh[c] = before[c] < 0 && c != first;
    }
    std::sort(order, order + seen_count,
              [&](uint8_t a, uint8_t b) { return before[a] > before[b]; });
    int at = seen_count;
    if (before[first] < 0) order[at++] = first;
    for (int c = 0; c < 256; c++)
      if (before[c] < 0 && c != first) order[at++] = uint8_t(c);
    Stretch& s = stretches[k];
    uint16_t* const to = out + offset[k];
    uint16_t* end;
#ifdef __x86_64__
    if (has_list512())
      end = code_stretch_avx512(last, n, first, order, fresh, unused_below, s, to);
    else
#endif
      end = code_stretch<MtfList>(last, n, first, order, fresh, unused_below, s, to);
    if (end - to != s.symbols) throw Error(ErrorKind::Internal, "move-to-front stretch miscounted");
  });

  SymbolStats st;
  for (const Stretch& s : stretches)
    for (int v = 0; v < kMaxAlphaSize; v++) st.freq[v] += s.freq[v];
  st.alpha = used + 2;
  const uint16_t eob = uint16_t(used + 1);
  out[offset[count]] = eob;
  st.freq[eob]++;
  st.count = offset[count] + 1;
  return st;
}

// Bit i: positions[base + i] is not 0, so a symbol other than a run digit goes there.
// Bits at or past n are clear.
inline uint64_t nonzero_bits(const uint8_t* positions, int32_t n, int32_t base) {
  static constexpr uint8_t kZeros[64] = {};
  if (n - base >= 64) return differ64(positions + base, kZeros);
  uint64_t bits = 0;
  const int32_t end = std::min(n - base, 64);
  for (int32_t i = 0; i < end; i++) bits |= uint64_t(positions[base + i] != 0) << i;
  return bits;
}

// The same symbols from MTF positions already computed (by the GPU), `used` bytes in
// use, found and written as move_to_front writes them.
SymbolStats zero_run_symbols(const uint8_t* positions, int32_t n, int used, uint16_t* out) {
  SymbolStats st;
  st.alpha = used + 2;
  const uint16_t eob = uint16_t(used + 1);
  uint16_t* w = out;
  int32_t done = 0;  // positions coded so far
  for (int32_t base = 0; base < n; base += 64) {
    for (uint64_t bits = nonzero_bits(positions, n, base); bits; bits &= bits - 1) {
      const int32_t q = base + std::countr_zero(bits);
      w = put_zeros(w, uint32_t(q - done));
      done = q + 1;
      const uint16_t sym = uint16_t(positions[q] + 1);
      *w++ = sym;
      st.freq[sym]++;
    }
  }
  // Positions of `used` bytes are under `used`: any other would index past the tables.
  for (int s = used + 1; s <= 256; s++)
    if (st.freq[s] != 0) throw Error(ErrorKind::Internal, "move-to-front position out of range");
  w = put_zeros(w, uint32_t(n - done));
  *w++ = eob;
  st.freq[eob]++;
  st.count = int32_t(w - out);
  count_run_digits(out, w, st.freq);
  return st;
}

int group_count(int32_t symbols) {
  if (symbols < 200) return 2;
  if (symbols < 600) return 3;
  if (symbols < 1200) return 4;
  if (symbols < 2400) return 5;
  return 6;
}

// bzip2's starting point: tables cover consecutive symbol ranges of about equal total
// frequency, cheap (0) inside their range and dear (15) outside.
void initial_lengths(const SymbolStats& st, int groups, uint8_t (*len)[kMaxAlphaSize]) {
  int32_t remaining = st.count;
  int gs = 0;
  for (int part = groups; part > 0; part--) {
    int32_t target = remaining / part, have = 0;
    int ge = gs - 1;
    while (have < target && ge < st.alpha - 1) have += st.freq[++ge];
    if (ge > gs && part != groups && part != 1 && (groups - part) % 2 == 1) have -= st.freq[ge--];
    for (int v = 0; v < st.alpha; v++) len[part - 1][v] = (v >= gs && v <= ge) ? 0 : 15;
    gs = ge + 1;
    remaining -= have;
  }
}

// Adds `step` to the counts of the symbols in [p, e).
inline void count_symbols(int32_t (*freq)[kMaxAlphaSize], const uint16_t* p,
                          const uint16_t* e, int32_t step) {
  for (; p + 1 < e; p += 2) {
    freq[0][p[0]] += step;
    freq[1][p[1]] += step;
  }
  if (p < e) freq[0][p[0]] += step;
}

// The cheapest table for a group's symbols [p, e), the first of equals, from the costs of
// all tables for each symbol in 16-bit lanes (a group costs at most 50 * 17).
inline int cheapest_table(const CostLanes* cost_of, const uint16_t* p, const uint16_t* e,
                          int groups) {
  // Two sums, so that the adds do not form one long chain.
  CostLanes sum = {}, sum2 = {};
  const uint16_t* q = p;
  for (; q + 1 < e; q += 2) {
    sum += cost_of[q[0]];
    sum2 += cost_of[q[1]];
  }
  if (q < e) sum += cost_of[q[0]];
  sum += sum2;
  // Cost and number in one key, no branches.
  uint32_t best_key = uint32_t(sum[0]) << 3;
  for (int t = 1; t < groups; t++) best_key = std::min(best_key, uint32_t(sum[t]) << 3 | t);
  return int(best_key & 7);
}

// Symbol counts per table. Two counter sets, alternating by position: runs of one symbol
// would otherwise chain every increment on the previous one.
using TableCounts = int32_t[kMaxGroups][2][kMaxAlphaSize];

// Four rounds of: give each 50-symbol group the cheapest table, then rebuild every table
// from the symbols it was given. Returns the number of bits the symbols take. Given a
// team, each round's groups are taken in ranges at once, each range counting its own.
uint64_t choose_tables(const uint16_t* mtf, const SymbolStats& st, int groups, int32_t nsel,
                       uint8_t (*len)[kMaxAlphaSize], uint8_t* selectors, const Team* team) {
  // Kept from round to round where one thread counts: only groups that change table are
  // counted again.
  TableCounts freq = {};
  const size_t ranges =
      team ? size_t(std::clamp(nsel / 256, 1, 2 * std::max(1, team->threads))) : 0;
  if (ranges == 1) team = nullptr;  // one range: the counts kept from round to round
  struct RangeCounts {
    TableCounts f;
  };
  std::vector<RangeCounts> range_freq(team ? ranges : 0);
  uint64_t bits = 0;
  for (int iter = 0; iter < format::kTableIterations; iter++) {
    CostLanes cost_of[kMaxAlphaSize];
    for (int v = 0; v < st.alpha; v++) {
      CostLanes c = {};
      for (int t = 0; t < groups; t++) c[t] = len[t][v];
      cost_of[v] = c;
    }
    auto group = [&](int32_t g) {
      return std::pair(mtf + g * kGroupSize, mtf + std::min(g * kGroupSize + kGroupSize, st.count));
    };
    if (team) {
      team->run(ranges, [&](size_t r) {
        TableCounts& f = range_freq[r].f;
        std::fill(&f[0][0][0], &f[0][0][0] + sizeof(TableCounts) / sizeof(int32_t), 0);
        for (int32_t g = int32_t(nsel * r / ranges); g < int32_t(nsel * (r + 1) / ranges); g++) {
          const auto [p, e] = group(g);
          const int best = cheapest_table(cost_of, p, e, groups);
          count_symbols(f[best], p, e, 1);
          selectors[g] = uint8_t(best);
        }
      });
      std::fill(&freq[0][0][0], &freq[0][0][0] + sizeof(TableCounts) / sizeof(int32_t), 0);
      for (const RangeCounts& r : range_freq)
        for (int t = 0; t < groups; t++)
          for (int v = 0; v < st.alpha; v++) freq[t][0][v] += r.f[t][0][v] + r.f[t][1][v];
    } else {
      for (int32_t g = 0; g < nsel; g++) {
        const auto [p, e] = group(g);
        const int best = cheapest_table(cost_of, p, e, groups);
        if (iter == 0 || best != selectors[g]) {
          if (iter > 0) count_symbols(freq[selectors[g]], p, e, -1);
          count_symbols(freq[best], p, e, 1);
          selectors[g] = uint8_t(best);
        }
      }
    }
    for (int t = 0; t < groups; t++) {
      int32_t total[kMaxAlphaSize];
      for (int v = 0; v < st.alpha; v++) total[v] = freq[t][0][v] + freq[t][1][v];
      make_code_lengths(len[t], total, st.alpha, format::kEncodeCodeLen);
      if (iter == format::kTableIterations - 1)
        for (int v = 0; v < st.alpha; v++) bits += uint64_t(total[v]) * len[t][v];
    }
  }
  return bits;
}

// Tables, header and data of a block whose symbols are in ws.symbols.
void write_block(const SymbolStats& st, const bool* in_use, uint32_t orig_ptr,
                 uint32_t block_crc, bool randomised, EncoderWorkspace& ws, BitWriter& out,
                 const Team* team = nullptr) {
  const int groups = group_count(st.count);
  uint8_t len[kMaxGroups][kMaxAlphaSize];
  initial_lengths(st, groups, len);
  const int32_t nsel = (st.count + kGroupSize - 1) / kGroupSize;
  ws.selectors.resize(size_t(nsel));
  const uint64_t data_bits =
      choose_tables(ws.symbols, st, groups, nsel, len, ws.selectors.data(), team);

  out.put48(format::kBlockMagic);
  out.put(32, block_crc);
  out.put(1, randomised);
  out.put(24, orig_ptr);

  bool used16[16] = {};
  for (int c = 0; c < 256; c++) used16[c >> 4] |= in_use[c];
  for (int i = 0; i < 16; i++) out.put(1, used16[i]);
  for (int i = 0; i < 16; i++)
    if (used16[i])
      for (int j = 0; j < 16; j++) out.put(1, in_use[i * 16 + j]);

  out.put(3, uint32_t(groups));
  out.put(15, uint32_t(nsel));
  {
    // The selectors' MTF list is six bytes of one word, searched and shifted without a
    // loop; their codes go out through a Burst.
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    uint64_t order = 0x050403020100ull;
    BitWriter::Burst burst(out, uint64_t(nsel) * kMaxGroups);
    for (int32_t i = 0; i < nsel; i++) {
      const uint8_t s = ws.selectors[size_t(i)];
      const uint64_t x = order ^ (kOnes * s);
      const uint64_t hit = (x - kOnes) & ~x & kHigh;  // the lowest flagged byte is exact
      const uint64_t moved = hit ^ (hit - 1);          // bytes up to s's position
      order = (order & ~moved) | ((order << 8) & moved) | s;
      const int j = std::countr_zero(hit) >> 3;
      burst.put(j + 1, (2u << j) - 2);  // j ones, then a zero
    }
  }

  for (int t = 0; t < groups; t++) {
    int cur = len[t][0];
    out.put(5, uint32_t(cur));
    for (int v = 0; v < st.alpha; v++) {
      for (; cur < len[t][v]; cur++) out.put(2, 2);
      for (; cur > len[t][v]; cur--) out.put(2, 3);
      out.put(1, 0);
    }
  }

  // Code and length of each symbol in one word: code << 5 | length.
  uint32_t coded[kMaxGroups][kMaxAlphaSize];
  for (int t = 0; t < groups; t++) {
    uint32_t code[kMaxAlphaSize];
    assign_codes(code, len[t], st.alpha);
    for (int v = 0; v < st.alpha; v++) coded[t][v] = code[v] << 5 | len[t][v];
  }
  const uint16_t* mtf = ws.symbols;
  BitWriter::Burst burst(out, data_bits);
  for (int32_t s = 0, gs = 0; gs < st.count; s++, gs += kGroupSize) {
    const uint32_t* table = coded[ws.selectors[size_t(s)]];
    const int32_t ge = std::min(gs + kGroupSize, st.count);
    // Three codes (at most 3 * 17 bits) joined per put: the put's shift, store and
    // pointer step then serve three symbols.
    int32_t i = gs;
    for (; ge - i >= 3; i += 3) {
      const uint32_t a = table[mtf[i]], b = table[mtf[i + 1]], c = table[mtf[i + 2]];
      const uint64_t v = ((uint64_t(a >> 5) << (b & 31) | (b >> 5)) << (c & 31)) | (c >> 5);
      burst.put(int((a & 31) + (b & 31) + (c & 31)), v);
    }
    for (; i < ge; i++) burst.put(int(table[mtf[i]] & 31), table[mtf[i]] >> 5);
  }
}

}  // namespace

void encode_block(const uint8_t* last, int32_t n, uint32_t orig_ptr, uint32_t block_crc,
                  bool randomised, EncoderWorkspace& ws, BitWriter& out, const Team* team) {
  bool in_use[256];  // the move to front finds the bytes in use
  const SymbolStats st = team && n > 0 ? move_to_front_shared(last, n, in_use, ws.symbols, *team)
                                       : move_to_front(last, n, in_use, ws.symbols);
  write_block(st, in_use, orig_ptr, block_crc, randomised, ws, out, team);
}

void encode_mtf_block(const uint8_t* positions, int32_t n, const bool* in_use, uint32_t orig_ptr,
                      uint32_t block_crc, bool randomised, EncoderWorkspace& ws, BitWriter& out) {
  int used = 0;
  for (int c = 0; c < 256; c++) used += in_use[c];
  write_block(zero_run_symbols(positions, n, used, ws.symbols), in_use, orig_ptr, block_crc,
              randomised, ws, out);
}

}  // namespace gpbzip2
