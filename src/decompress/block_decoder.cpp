#include "block_decoder.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/bit_reader.h"
#include "common/cpu_features.h"
#include "common/crc32.h"
#include "common/huge_pages.h"
#include "common/rand_table.h"

namespace gpbzip2 {

namespace {

// Codes up to this long decode with one table lookup; the tables, 4 KB each, stay in L1.
constexpr int kFastBits = 11;

// Canonical Huffman decoding table for one group. Codes are assigned in order of
// (length, symbol), as bzip2 does, so all codes of length <= L, left-justified to 20
// bits, lie below limit[L].
struct HuffTable {
  // What the symbol means (symbol_bits) | length, 0 when the code is longer. Six bits for
  // the length: x86 shifts take the count modulo 64, so skipping it needs no mask in the
  // chain of dependencies.
  uint16_t fast[1 << kFastBits];
  uint32_t limit[format::kMaxCodeLen + 1];
  int32_t offset[format::kMaxCodeLen + 1];  // index into sorted of code 0 of each length
  uint16_t sorted[format::kMaxAlphaSize];
};

// A symbol's meaning as the decoding loop takes it, in bits 6 to 15 of a table entry:
// a run digit (RUNA or RUNB), RUNB, and the MTF index (0 for a digit); RUNB without a
// digit is the end of the block.
constexpr uint32_t kDigit = 1 << 6, kRunB = 1 << 7, kEob = kRunB;
uint32_t symbol_bits(int sym, int eob) {
  if (sym <= format::kRunB) return kDigit | (sym == format::kRunB ? kRunB : 0);
  return sym == eob ? kEob : uint32_t(sym - 1) << 8;
}

// False when the lengths oversubscribe the code space. An incomplete code is kept, as
// bzip2 keeps it; reading one of its unused codes is an error then.
bool build_table(HuffTable& t, const uint8_t* len, int alpha_size) {
  int count[format::kMaxCodeLen + 1] = {};
  for (int s = 0; s < alpha_size; s++) count[len[s]]++;
  int next[format::kMaxCodeLen + 1];
  uint32_t code = 0;
  int index = 0;
  for (int l = 1; l <= format::kMaxCodeLen; l++) {
    next[l] = index;
    t.offset[l] = index - int32_t(code);
    index += count[l];
    code += uint32_t(count[l]);
    if (code > (1u << l)) return false;
    t.limit[l] = code << (format::kMaxCodeLen - l);
    code <<= 1;
  }
  for (int s = 0; s < alpha_size; s++) t.sorted[next[len[s]]++] = uint16_t(s);
  // Codes of length <= kFastBits, in canonical order, fill consecutive table ranges.
  std::memset(t.fast, 0, sizeof t.fast);
  code = 0;
  for (int l = 1; l <= kFastBits; l++) {
    for (int i = 0; i < count[l]; i++, code++) {
      const int sym = t.sorted[t.offset[l] + int32_t(code)];
      const uint16_t e = uint16_t(symbol_bits(sym, alpha_size - 1) | l);
      const uint32_t first = code << (kFastBits - l), n = 1u << (kFastBits - l);
      for (uint32_t k = 0; k < n; k++) t.fast[first + k] = e;
    }
    code <<= 1;
  }
  return true;
}


constexpr uint32_t kChainEnd = 1u << 31;  // in a link: the next row starts a chain
constexpr uint32_t kNone = ~0u;

uint32_t next_row(uint32_t link) { return (link & ~kChainEnd) >> 8; }

// Moves p[16, idx) to p[17, idx + 1), 32 bytes at a time from the top, inline (a call
// to memmove costs more than such short moves). It also writes p[-15, 16), and reads
// p[-16, 16).
[[gnu::always_inline]] inline void shift_up(uint8_t* p, int idx) {
  for (int k = idx; k > 16; k -= 32) {
    uint8_t v[32];
    std::memcpy(v, p + k - 32, 32);
    std::memcpy(p + k - 31, v, 32);
  }
}

// The MTF list's first 16 bytes, in a vector register: a move-to-front among them is one
// byte shuffle (pshufb where the CPU has SSSE3), one cycle in the chain of dependencies
// from one literal to the next, and the copies of the front byte are another.
using Bytes16 = uint8_t __attribute__((vector_size(16)));

// GCC's permutes of vector bytes by a mask in a vector, into r: byte i of r is byte
// mask[i] of v (of v then w, with two), the mask taken modulo the bytes there are. Clang,
// which builds the fuzzers, has no such builtin: there the same, a byte at a time. (r, not
// a return value: GCC warns of returning a 64-byte vector from a function compiled
// without AVX-512.)
template <typename V>
[[gnu::always_inline]] inline void permute(V& r, V v, V mask) {
#ifdef __clang__
  constexpr int n = sizeof(V);
  for (int i = 0; i < n; i++) r[i] = v[mask[i] % n];
#else
  r = __builtin_shuffle(v, mask);
#endif
}
template <typename V>
[[gnu::always_inline]] inline void permute(V& r, V v, V w, V mask) {
#ifdef __clang__
  constexpr int n = sizeof(V);
  for (int i = 0; i < n; i++) {
    const int k = mask[i] % (2 * n);
    r[i] = k < n ? v[k] : w[k - n];
  }
#else
  r = __builtin_shuffle(v, w, mask);
#endif
}

// kToFront[idx]: the shuffle that moves byte idx to the front and bytes [0, idx) up one.
struct alignas(16) ToFront {
  uint8_t s[16][16];
};
// Where byte j of the list comes from when byte idx moves to the front.
constexpr uint8_t to_front_source(int idx, int j) {
  return uint8_t(j == 0 ? idx : j <= idx ? j - 1 : j);
}
constexpr ToFront kToFront = [] {
  ToFront t{};
  for (int idx = 0; idx < 16; idx++)
    for (int j = 0; j < 16; j++) t.s[idx][j] = to_front_source(idx, j);
  return t;
}();

[[gnu::always_inline]] inline Bytes16 to_front(Bytes16 head, uint32_t idx) {
  Bytes16 order;
  std::memcpy(&order, kToFront.s[idx], 16);
  Bytes16 moved;
  permute(moved, head, order);
  return moved;
}

// Short runs and literals store a fixed number of copies of their byte, more than they
// need: one 16-byte store for bytes; for words, two of them (four, for 16 words, measured
// no faster).
template <typename Sym>
constexpr uint32_t kCopies = sizeof(Sym) == 1 ? 16 : 8;

// The copies are of the list's front byte.
[[gnu::always_inline]] inline void store_copies(uint8_t* p, Bytes16 head) {
  Bytes16 v;
  permute(v, head, Bytes16{});
  std::memcpy(p, &v, 16);
}
[[gnu::always_inline]] inline void store_copies(uint32_t* p, Bytes16 head) {
  using Words4 = uint32_t __attribute__((vector_size(16)));
  const Words4 v = {head[0], head[0], head[0], head[0]};
  std::memcpy(p, &v, 16);
  std::memcpy(p + 4, &v, 16);
}

// With AVX-512 VBMI, the whole list in four 64-byte vector registers: its bytes [0, 64)
// in `front`, where a move is one byte permute (vpermb) as head's is, and the rest in
// Rest. A move of index >= 64 (not 16: the branch on it is mispredicted less) is a few
// permutes and blends, with no stores whose forwarding to the next such move's loads
// would be in the chain from one literal to the next.
using Bytes64 = uint8_t __attribute__((vector_size(64)));

// List bytes [64 r, 64 r + 64) in v<r>. Three variables, not an array, which GCC would
// keep in memory.
struct Rest {
  Bytes64 v1, v2, v3;
};

struct alignas(64) WideShifts {
  uint8_t to_front[64][64];  // kToFront's moves, of 64 bytes
  uint8_t up[64];            // byte i takes byte i - 1; byte 0 byte 63 of the register before
  uint8_t insert[64];        // byte i takes byte i - 1; byte 0 byte 0 of the second operand
  uint8_t pos[3][64];        // pos[r][i]: i's index in Rest, 64 r + i
};
constexpr WideShifts kWideShifts = [] {
  WideShifts t{};
  for (int idx = 0; idx < 64; idx++)
    for (int j = 0; j < 64; j++)
      t.to_front[idx][j] = to_front_source(idx, j);
  for (int i = 0; i < 64; i++) {
    t.up[i] = uint8_t(i == 0 ? 127 : i - 1);
    t.insert[i] = uint8_t(i == 0 ? 64 : i - 1);
    for (int r = 0; r < 3; r++) t.pos[r][i] = uint8_t(64 * r + i);
  }
  return t;
}();

// Byte i - 1 of v into byte i where pos <= j, byte 63 of `before` into byte 0.
[[gnu::always_inline]] inline void shift_below(Bytes64& v, Bytes64 before, Bytes64 up,
                                               const uint8_t* pos, Bytes64 j) {
  Bytes64 p;
  std::memcpy(&p, pos, 64);
  Bytes64 shifted;
  permute(shifted, v, before, up);
  v = p <= j ? shifted : v;
}

// Moves list byte idx to the front. (void: GCC warns of returning a 64-byte vector from a
// function compiled without AVX-512.)
[[gnu::always_inline]] inline void wide_to_front(Bytes64& front, Rest& rest, uint32_t idx) {
  Bytes64 order;
  if (idx < 64) [[likely]] {
    std::memcpy(&order, kWideShifts.to_front[idx], 64);
    permute(front, front, order);
    return;
  }
  // Byte j of Rest, from the one or two registers that hold it (a permute indexes 128).
  const Bytes64 j = Bytes64{} + uint8_t(idx - 64);
  const Rest old = rest;
  Bytes64 high, low;
  permute(high, old.v3, old.v3, j);
  permute(low, old.v1, old.v2, j);
  const Bytes64 b = j >= 128 ? high : low;
  std::memcpy(&order, kWideShifts.up, 64);
  shift_below(rest.v1, front, order, kWideShifts.pos[0], j);
  shift_below(rest.v2, old.v1, order, kWideShifts.pos[1], j);
  shift_below(rest.v3, old.v2, order, kWideShifts.pos[2], j);
  std::memcpy(&order, kWideShifts.insert, 64);
  permute(front, front, b, order);
}

#ifdef __x86_64__
// 3: AVX-512 BW, VL and VBMI too; 2: AVX2 and BMI2; 1: SSSE3; 0: none.
const int kX86Level = [] {
  const bool avx2 = cpu::has_avx2_bmi2();
  if (avx2 && cpu::has_avx512_vbmi()) return 3;
  if (avx2) return 2;
  return cpu::has_ssse3() ? 1 : 0;
}();
#endif

}  // namespace

void BlockDecoder::Free::operator()(uint32_t* p) const {
  free_after_small_head(p, kTtHeadBytes, kTtWords * sizeof(uint32_t) - kTtHeadBytes);
}

BlockDecoder::BlockDecoder() {
  tt_.reset(static_cast<uint32_t*>(
      allocate_after_small_head(kTtHeadBytes, kTtWords * sizeof(uint32_t) - kTtHeadBytes)));
}

BlockDecoder::Status BlockDecoder::decode_symbols(const uint8_t* data, size_t size, uint64_t bit,
                                                  uint8_t* bwt) {
  return bwt ? decode_for_cpu(data, size, bit, bwt) : decode_for_cpu(data, size, bit, tt_.get());
}

template <typename Sym>
BlockDecoder::Status BlockDecoder::decode_for_cpu(const uint8_t* data, size_t size, uint64_t bit,
                                                  Sym* out) {
#ifdef __x86_64__
  if (kX86Level == 3) return decode_into_avx512(data, size, bit, out);
  if (kX86Level == 2) return decode_into_avx2(data, size, bit, out);
  if (kX86Level == 1) return decode_into_ssse3(data, size, bit, out);
#endif
  return decode_into(data, size, bit, out);
}

#ifdef __x86_64__
// decode_into for CPUs with AVX2: a byte shuffle (SSSE3's) and 32-byte moves; and BMI2's
// shifts by a register, which take any register for the count (into bytes on the 2-core
// AMD: 470 MB/s against 405 with SSSE3 alone, 16-byte moves; 32-byte moves, 498). Older
// CPUs with SSSE3 keep the shuffle; without it the compiler's shuffles go byte by byte,
// 2.5 times slower.
template <typename Sym>
BlockDecoder::Status BlockDecoder::decode_into_avx2(const uint8_t* data, size_t size, uint64_t bit,
                                                    Sym* out) {
  return decode_into(data, size, bit, out);
}
template <typename Sym>
BlockDecoder::Status BlockDecoder::decode_into_ssse3(const uint8_t* data, size_t size,
                                                     uint64_t bit, Sym* out) {
  return decode_into(data, size, bit, out);
}
// decode_into with the list in registers (wide_to_front). On the 2-core AMD (Zen 4), into
// bytes: silesia 630 MB/s against 503, a source tar 530 against 463.
template <typename Sym>
BlockDecoder::Status BlockDecoder::decode_into_avx512(const uint8_t* data, size_t size,
                                                      uint64_t bit, Sym* out) {
  return decode_into<true>(data, size, bit, out);
}
#endif

// The BWT vector's bytes go to `out`: the decoder's own words (for its inverse BWT), or
// bytes for another station's.
template <bool kWide, typename Sym>
inline BlockDecoder::Status BlockDecoder::decode_into(const uint8_t* data, size_t size,
                                                      uint64_t bit, Sym* out) {
  BitReader br(data, size, bit);
  // Corrupt-looking data past the end of the input is really missing input.
  auto failed = [&](const char* why) { return br.overran() ? Status::OutOfInput : fail(why); };

  nblock_ = 0;
  const uint64_t magic = uint64_t(br.get(24)) << 24 | br.get(24);
  if (magic != format::kBlockMagic) return failed("bad block header");
  stored_crc_ = br.get(32);
  randomised_ = br.get(1) != 0;
  orig_ptr_ = br.get(24);

  // The bytes in use: 16 bits for the 16 ranges, then 16 bits for each range in use.
  uint8_t seq_to_byte[256];
  int in_use = 0;
  const uint32_t ranges = br.get(16);
  for (int r = 0; r < 16; r++) {
    if (!(ranges & (0x8000u >> r))) continue;
    const uint32_t bits = br.get(16);
    for (int b = 0; b < 16; b++)
      if (bits & (0x8000u >> b)) seq_to_byte[in_use++] = uint8_t(r * 16 + b);
  }
  if (in_use == 0) return failed("no symbols in use");
  const int alpha_size = in_use + 2;
  const int eob = in_use + 1;

  const int groups = int(br.get(3));
  if (groups < format::kMinGroups || groups > format::kMaxGroups)
    return failed("bad number of Huffman tables");
  const int selectors_coded = int(br.get(15));
  if (selectors_coded < 1) return failed("no selectors");
  // bzip2 1.0.8 reads every selector but keeps only the first 18002 of them.
  const int selectors = std::min(selectors_coded, format::kMaxSelectors);
  uint8_t selector[format::kMaxSelectors];
  uint8_t group_mtf[format::kMaxGroups] = {0, 1, 2, 3, 4, 5};
  for (int i = 0; i < selectors_coded; i++) {
    int j = 0;
    while (br.get(1)) {
      if (++j >= groups) return failed("selector out of range");
    }
    const uint8_t g = group_mtf[j];
    for (; j > 0; j--) group_mtf[j] = group_mtf[j - 1];
    group_mtf[0] = g;
    if (i < selectors) selector[i] = g;
  }

  HuffTable tables[format::kMaxGroups];
  for (int g = 0; g < groups; g++) {
    uint8_t len[format::kMaxAlphaSize];
    int cur = int(br.get(5));
    for (int s = 0; s < alpha_size; s++) {
      for (;;) {
        if (cur < 1 || cur > format::kMaxCodeLen) return failed("bad Huffman code length");
        if (br.buffered() < 2) br.refill();
        if (!br.peek(1)) {
          br.skip(1);
          break;
        }
        cur += br.peek(2) & 1 ? -1 : 1;
        br.skip(2);
      }
      len[s] = uint8_t(cur);
    }
    if (!build_table(tables[g], len, alpha_size)) return failed("oversubscribed Huffman table");
  }

  // Symbols: MTF indexes + 1, with runs of the front byte as RUNA/RUNB digits.
  // The MTF list: its first 16 bytes in head, the rest in mtf[16, 256). Most indexes are
  // below 16: those moves touch no memory, whose store-to-load latency would otherwise
  // be in the chain of dependencies from one literal to the next.
  uint8_t mtf_memory[16 + 256] = {};  // shift_up's moves reach below the list
  uint8_t* const mtf = mtf_memory + 16;
  std::memcpy(mtf, seq_to_byte, size_t(in_use));
  Bytes16 head;
  std::memcpy(&head, mtf, 16);
  Bytes64 front;
  Rest rest;
  if constexpr (kWide) {
    std::memcpy(&front, mtf, 64);
    std::memcpy(&rest.v1, mtf + 64, 64);
    std::memcpy(&rest.v2, mtf + 128, 64);
    std::memcpy(&rest.v3, mtf + 192, 64);
  }
  // The byte counts are for the CPU's inverse BWT; another station's counts its own.
  constexpr bool kCount = sizeof(Sym) == sizeof(uint32_t);
  uint32_t* const freq = freq_;
  if (kCount) std::fill_n(freq, 256, 0u);
  Sym* const tt = out;
  const uint32_t limit = uint32_t(format::kMaxBlockBytes);
  uint32_t n = 0;     // past limit once a run has overflowed the block, which fails below
  int digit_pos = 0;  // of the next run digit; 0 after a literal
  int next_selector = 0;
  for (;;) {
    if (next_selector >= selectors) return failed("more symbols than selectors");
    const HuffTable* const t = &tables[selector[next_selector++]];
    for (int i = 0; i < format::kGroupSize; i++) {
      // A refill before every other symbol leaves enough bits for two codes of any
      // length, and unlike a test of the bits left, the branch on it is predicted.
      static_assert(format::kGroupSize % 2 == 0 && 2 * format::kMaxCodeLen <= 56);
      if (i % 2 == 0) br.refill();
      uint32_t e;
      // The table is indexed straight from the buffer: one shift fewer in the chain of
      // dependencies from one symbol to the next (buffer, lookup, shift by its length).
      if ((e = t->fast[br.peek(kFastBits)])) {
        br.skip(int(e & 63));
      } else {
        const uint32_t peek = br.peek(format::kMaxCodeLen);
        int l = kFastBits + 1;
        while (l <= format::kMaxCodeLen && peek >= t->limit[l]) l++;
        if (l > format::kMaxCodeLen) return failed("invalid Huffman code");
        const int sym = t->sorted[t->offset[l] + int32_t(peek >> (format::kMaxCodeLen - l))];
        e = symbol_bits(sym, eob);
        br.skip(l);
      }
      if ((e & (kDigit | kEob)) == kEob) {
        if (n > limit) return failed("block longer than its limit");
        goto done;
      }

      // Run lengths are bijective base-2 numbers, least significant digit first: digit k
      // of a run, RUNA or RUNB, stands for 1 << k or 2 << k copies of the front byte, and
      // they are written at once. A digit is then a move of index 0, which changes
      // nothing, and a literal a move of its index with one copy: the kind of symbol,
      // which follows no pattern a predictor could learn, is never branched on.
      const uint32_t digit = e >> 6 & 1;
      const int pos = digit_pos & -int(digit);
      const uint32_t count = (1 + (e >> 7 & 1)) << pos;
      digit_pos = pos + int(digit);
      if (digit_pos > 21) return failed("run too long");  // a 22nd digit, as bzip2
      const uint32_t idx = e >> 8;
      if constexpr (kWide) {
        wide_to_front(front, rest, idx);
        head = __builtin_shufflevector(front, front, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                       14, 15);
      } else if (idx < 16) {
        head = to_front(head, idx);
      } else {
        const uint8_t b = mtf[idx];
        shift_up(mtf, int(idx));
        mtf[16] = head[15];
        head = to_front(head, 15);
        head[0] = b;
      }
      const uint8_t b = head[0];
      if (count <= kCopies<Sym> && n <= limit - kCopies<Sym>) {
        // Most runs are short: their digits and the literals store kCopies copies, of
        // which count are kept, rather than branch on the count.
        store_copies(tt + n, head);
      } else {
        if (n + count > limit) {
          // A run that overflows fails at the next symbol that is no digit, as a
          // literal that overflows fails here (a later digit may fail first).
          if (!digit) return failed("block longer than its limit");
          n = limit + 1;
          continue;
        }
        std::fill(tt + n, tt + n + count, Sym(b));
      }
      if (kCount) freq[b] += count;
      n += count;
    }
  }
done:
  if (br.overran()) return Status::OutOfInput;
  if (orig_ptr_ >= n) return fail("origPtr out of range");
  end_bit_ = br.bit_position();
  nblock_ = n;
  return Status::Ok;
}

BlockDecoder::Status BlockDecoder::decode(const uint8_t* data, size_t size, uint64_t bit,
                                          std::span<uint8_t* const> work) {
  const Status st = decode_symbols(data, size, bit);
  if (st == Status::Ok) invert(work);
  return st;
}

void BlockDecoder::load_bwt(const uint8_t* bwt, uint32_t n, uint32_t orig_ptr, bool randomised) {
  std::fill_n(freq_, 256, 0u);
  uint32_t* const tt = tt_.get();
  for (uint32_t i = 0; i < n; i++) {
    tt[i] = bwt[i];
    freq_[bwt[i]]++;
  }
  nblock_ = n;
  orig_ptr_ = orig_ptr;
  randomised_ = randomised;
}

void BlockDecoder::invert(std::span<uint8_t* const> work) {
  link_rows();
  undo_bwt(work);
}

std::vector<uint8_t> BlockDecoder::invert_bwt(const uint8_t* bwt, uint32_t n, uint32_t orig_ptr) {
  BlockDecoder d;
  d.load_bwt(bwt, n, orig_ptr, false);
  const size_t pages = work_pages(n);
  std::vector<uint8_t> memory(pages * kWorkPage);
  uint8_t* work[kWorkPages];
  for (size_t i = 0; i < pages; i++) work[i] = memory.data() + i * kWorkPage;
  d.invert({work, pages});
  return {d.text().begin(), d.text().end()};
}

// Row i of the sorted rotations ends with byte L[i] = tt[i] and, for the k-th occurrence
// of that byte, LF(i) is the k-th row starting with it: the row of the rotation one byte
// to the left. tt gets LF's inverse, the next row in text order, beside each row's byte.
void BlockDecoder::link_rows() {
  const uint32_t n = nblock_;
  uint32_t* const tt = tt_.get();
  uint32_t start[256];
  for (uint32_t b = 0, sum = 0; b < 256; b++) {
    start[b] = sum;
    sum += freq_[b];
  }
  chain_step_ = std::bit_ceil(std::max((n + kChains - 1) / kChains, kMinChain));
  const uint32_t step_mask = chain_step_ - 1;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t b = tt[i] & 0xff;
    const uint32_t row = start[b]++;
    tt[row] |= i << 8 | ((i & step_mask) == 0 ? kChainEnd : 0);
  }
  tt[orig_ptr_] |= kChainEnd;  // its next row holds the text's first byte
}

void BlockDecoder::undo_bwt(std::span<uint8_t* const> work) {
  const uint32_t n = nblock_;
  // Where the links form several cycles (a periodic block; or a vector that is no BWT),
  // the text, like bzip2's, is the cycle through the first row over and over.
  const uint32_t cycle = walk_chains(work);
  uint8_t* const text = reinterpret_cast<uint8_t*>(tt_.get());
  for (uint32_t k = cycle; k < n; k++) text[k] = text[k - cycle];
  if (randomised_) flip_randomised_bits(text, n);
}

// Walks all chains, kLanes at a time, then copies their pieces in text order over tt.
// Returns the bytes copied: the length of the cycle through the first row.
uint32_t BlockDecoder::walk_chains(std::span<uint8_t* const> work) {
  const uint32_t n = nblock_;
  const uint32_t* const tt = tt_.get();
  const uint32_t step = chain_step_;
  const uint32_t first_row = next_row(tt[orig_ptr_]);
  // Chain c starts at row c * step; the first row has a chain of its own unless it is
  // one of those.
  const uint32_t stepped = (n - 1) / step + 1;
  const uint32_t count = stepped + (first_row % step != 0);
  auto chain_of = [&](uint32_t row) { return row % step == 0 ? row / step : stepped; };
  chains_.assign(count, {kNone, kNone, 0});
  pieces_.clear();
  // Lanes take chunks of the work pages until their chains are done, at most n bytes in
  // all: every row belongs to one chain. A lane gives up a chunk only when full, so at
  // most kLanes chunks are not full: kWorkChunks are enough.
  constexpr uint32_t kChunksPerPage = kWorkPage / kChunk;
  uint32_t next_chunk = 0, next_chain = 0;

  struct Lane {
    uint32_t row, chain;
    uint8_t *out, *end;
  };
  Lane lanes[kLanes];
  auto open_piece = [&](uint32_t chain, const uint8_t* at) {
    const uint32_t p = uint32_t(pieces_.size());
    pieces_.push_back({at, at, kNone});
    Chain& c = chains_[chain];
    (c.first_piece == kNone ? c.first_piece : pieces_[c.last_piece].next) = p;
    c.last_piece = p;
  };
  auto close_piece = [&](uint32_t chain, const uint8_t* at) {
    pieces_[chains_[chain].last_piece].end = at;
  };
  auto take_chunk = [&](Lane& l) {
    l.out = work[next_chunk / kChunksPerPage] + next_chunk % kChunksPerPage * kChunk;
    l.end = l.out + kChunk;
    next_chunk++;
  };
  auto start_chain = [&](Lane& l, const uint8_t* at) {
    l.chain = next_chain++;
    l.row = l.chain < stepped ? l.chain * step : first_row;
    open_piece(l.chain, at);
  };

  int active = 0;
  for (; active < kLanes && next_chain < count; active++) {
    take_chunk(lanes[active]);
    start_chain(lanes[active], lanes[active].out);
  }
  while (active > 0) {
    uint32_t room = kChunk;
    for (int j = 0; j < active; j++) room = std::min(room, uint32_t(lanes[j].end - lanes[j].out));
    for (uint32_t r = 0; r < room; r++) {
      for (int j = 0; j < active; j++) {
        Lane& l = lanes[j];
        const uint32_t link = tt[l.row];
        l.out[r] = uint8_t(link);
        l.row = next_row(link);
        if (link & kChainEnd) {
          // Rare: the chain is done; the lane goes on with the next one right after it.
          const uint8_t* const at = l.out + r + 1;
          chains_[l.chain].end_row = l.row;
          close_piece(l.chain, at);
          if (next_chain < count) {
            start_chain(l, at);
          } else {
            l.chain = kNone;
            room = r + 1;  // ends the round, after which the lane is dropped
          }
        }
      }
    }
    for (int j = 0; j < active; j++) {
      Lane& l = lanes[j];
      l.out += room;
      if (l.chain == kNone) {
        lanes[j--] = lanes[--active];
      } else if (l.out == l.end) {
        close_piece(l.chain, l.out);
        take_chunk(l);
        open_piece(l.chain, l.out);
      }
    }
  }

  uint8_t* const text = reinterpret_cast<uint8_t*>(tt_.get());
  uint32_t k = 0;
  const uint32_t first = chain_of(first_row);
  uint32_t c = first;
  do {
    for (uint32_t p = chains_[c].first_piece; p != kNone; p = pieces_[p].next) {
      const Piece& piece = pieces_[p];
      std::memcpy(text + k, piece.begin, size_t(piece.end - piece.begin));
      k += uint32_t(piece.end - piece.begin);
    }
    c = chain_of(chains_[c].end_row);
  } while (c != first);
  return k;
}

#ifdef __SSE2__
namespace {

// Bit j set where p[j, j + 4) are four equal bytes, for j in [0, 16). Reads p[0, 19).
inline uint32_t fours_at(const uint8_t* p) {
  auto load = [&](int k) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k)); };
  const __m128i a = load(0);
  const __m128i eq = _mm_and_si128(
      _mm_and_si128(_mm_cmpeq_epi8(a, load(1)), _mm_cmpeq_epi8(a, load(2))),
      _mm_cmpeq_epi8(a, load(3)));
  return uint32_t(_mm_movemask_epi8(eq));
}

}  // namespace
#endif

// After four equal bytes the next byte of the text is a count of further copies.
size_t RunExpander::read(uint8_t* buf, size_t cap) {
  size_t n = std::min<size_t>(repeat_, cap);
  std::memset(buf, last_, n);
  repeat_ -= uint32_t(n);
  const uint8_t* p = p_;
  uint32_t run = run_;
  uint8_t last = last_;
  while (p < end_ && n < cap) {
#ifdef __SSE2__
    // Most of the text is literal bytes: they go 16 at a time, up to the next four equal
    // ones, as long as the run before p cannot be completed by the bytes at p (then no
    // four equal bytes start before p).
    auto completes_run = [&] {
      if (run == 4) return true;
      if (run == 0) return false;
      for (uint32_t k = 0; k < 4 - run; k++)
        if (p[k] != last) return false;
      return true;
    };
    if (end_ - p >= 20 && cap - n >= 20 && !completes_run()) {
      do {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(buf + n),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        const uint32_t fours = fours_at(p);
        if (!fours) {
          p += 16;
          n += 16;
          continue;
        }
        const int j = std::countr_zero(fours);
        last = p[j];
        std::memset(buf + n + j, last, 4);  // may lie past the 16 bytes stored
        n += size_t(j) + 4;
        const uint8_t count = p[j + 4];
        const size_t k = std::min<size_t>(count, cap - n);
        std::memset(buf + n, last, k);
        n += k;
        repeat_ = uint32_t(count - k);
        p += j + 5;
      } while (end_ - p >= 20 && cap - n >= 20);
      // Four equal bytes that start before p were all seen (the last 16-byte step looked
      // at those starting up to p - 1): from p on, the text reads as after a count.
      run = 0;
      continue;
    }
#endif
    const uint8_t b = *p++;
    if (run == 4) {
      const size_t k = std::min<size_t>(b, cap - n);
      std::memset(buf + n, last, k);
      n += k;
      repeat_ = uint32_t(b - k);
      run = 0;
      continue;
    }
    buf[n++] = b;
    run = b == last ? run + 1 : 1;
    last = b;
  }
  p_ = p;
  run_ = run;
  last_ = last;
  crc_ = crc32_update(crc_, buf, n);
  return n;
}

}  // namespace gpbzip2
