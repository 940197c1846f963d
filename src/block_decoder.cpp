#include "block_decoder.h"

#include <algorithm>
#include <cstring>

#include "bit_reader.h"
#include "crc32.h"
#include "decode_rand_table.h"

namespace gpbzip2 {

namespace {

constexpr int kFastBits = 10;  // codes up to this long decode with one table lookup

// Canonical Huffman decoding table for one group. Codes are assigned in order of
// (length, symbol), as bzip2 does, so all codes of length <= L, left-justified to 20
// bits, lie below limit[L].
struct HuffTable {
  uint16_t fast[1 << kFastBits];  // symbol << 5 | length, 0 when the code is longer
  uint32_t limit[format::kMaxCodeLen + 1];
  int32_t offset[format::kMaxCodeLen + 1];  // index into sorted of code 0 of each length
  uint16_t sorted[format::kMaxAlphaSize];
};

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
      const uint16_t sym = t.sorted[t.offset[l] + int32_t(code)];
      const uint16_t e = uint16_t(sym << 5 | l);
      const uint32_t first = code << (kFastBits - l), n = 1u << (kFastBits - l);
      for (uint32_t k = 0; k < n; k++) t.fast[first + k] = e;
    }
    code <<= 1;
  }
  return true;
}

}  // namespace

BlockDecoder::BlockDecoder() : tt_(size_t(format::kMaxBlockBytes)) {}

BlockDecoder::Status BlockDecoder::decode(const uint8_t* data, size_t size, uint64_t bit) {
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
  uint8_t mtf[256];
  std::memcpy(mtf, seq_to_byte, size_t(in_use));
  uint32_t freq[256] = {};
  uint32_t* const tt = tt_.data();
  const uint32_t limit = uint32_t(format::kMaxBlockBytes);
  uint32_t n = 0;
  uint32_t run = 0, run_digit = 1;
  int group_left = 0, next_selector = 0;
  const HuffTable* t = nullptr;
  for (;;) {
    if (group_left == 0) {
      if (next_selector >= selectors) return failed("more symbols than selectors");
      t = &tables[selector[next_selector++]];
      group_left = format::kGroupSize;
    }
    group_left--;
    if (br.buffered() < format::kMaxCodeLen) br.refill();
    const uint32_t peek = br.peek(format::kMaxCodeLen);
    int sym;
    if (const uint16_t e = t->fast[peek >> (format::kMaxCodeLen - kFastBits)]) {
      sym = e >> 5;
      br.skip(e & 31);
    } else {
      int l = kFastBits + 1;
      while (l <= format::kMaxCodeLen && peek >= t->limit[l]) l++;
      if (l > format::kMaxCodeLen) return failed("invalid Huffman code");
      sym = t->sorted[t->offset[l] + int32_t(peek >> (format::kMaxCodeLen - l))];
      br.skip(l);
    }

    if (sym <= format::kRunB) {
      // Run lengths are bijective base-2 numbers, least significant digit first.
      if (run_digit >= (1u << 21)) return failed("run too long");
      run += run_digit << sym;
      run_digit <<= 1;
      continue;
    }
    if (run) {
      if (run > limit - n) return failed("block longer than its limit");
      const uint8_t b = mtf[0];
      freq[b] += run;
      std::fill(tt + n, tt + n + run, uint32_t(b));
      n += run;
      run = 0;
      run_digit = 1;
    }
    if (sym == eob) break;
    if (n >= limit) return failed("block longer than its limit");
    const int idx = sym - 1;
    const uint8_t b = mtf[idx];
    std::memmove(mtf + 1, mtf, size_t(idx));
    mtf[0] = b;
    freq[b]++;
    tt[n++] = b;
  }
  if (br.overran()) return Status::OutOfInput;
  if (orig_ptr_ >= n) return fail("origPtr out of range");
  end_bit_ = br.bit_position();
  nblock_ = n;

  // Inverse BWT links: the i-th occurrence of byte b in the BWT vector is the row whose
  // first byte is that b; chain each row to the row it came from.
  uint32_t start[256];
  uint32_t sum = 0;
  for (int b = 0; b < 256; b++) {
    start[b] = sum;
    sum += freq[b];
  }
  for (uint32_t i = 0; i < n; i++) tt[start[tt[i] & 0xff]++] |= i << 8;
  restart_output();
  return Status::Ok;
}

void BlockDecoder::restart_output() {
  pos_ = tt_[orig_ptr_] >> 8;
  left_ = nblock_;
  run_ = 0;
  last_ = 0;
  repeat_ = 0;
  crc_ = ~0u;
  rand_left_ = 0;
  rand_index_ = 0;
}

size_t BlockDecoder::read(uint8_t* buf, size_t cap) {
  const size_t n = randomised_ ? read_randomised(buf, cap) : read_plain(buf, cap);
  crc_ = crc32_update(crc_, buf, n);
  return n;
}

// After four equal bytes the next BWT byte is a count of further copies.
size_t BlockDecoder::read_plain(uint8_t* buf, size_t cap) {
  const uint32_t* const tt = tt_.data();
  size_t n = std::min<size_t>(repeat_, cap);
  std::memset(buf, last_, n);
  repeat_ -= uint32_t(n);
  uint32_t pos = pos_, left = left_, run = run_;
  uint8_t last = last_;
  while (left > 0 && n < cap) {
    const uint32_t e = tt[pos];
    pos = e >> 8;
    const uint8_t b = uint8_t(e);
    left--;
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
  pos_ = pos;
  left_ = left;
  run_ = run;
  last_ = last;
  return n;
}

// The same with bzip2 0.9.0's randomisation undone: one BWT byte in every few hundred
// has its low bit flipped, at distances taken from kRandomiseTable.
size_t BlockDecoder::read_randomised(uint8_t* buf, size_t cap) {
  const uint32_t* const tt = tt_.data();
  size_t n = std::min<size_t>(repeat_, cap);
  std::memset(buf, last_, n);
  repeat_ -= uint32_t(n);
  while (left_ > 0 && n < cap) {
    const uint32_t e = tt[pos_];
    pos_ = e >> 8;
    uint8_t b = uint8_t(e);
    left_--;
    if (rand_left_ == 0) {
      rand_left_ = kRandomiseTable[rand_index_];
      rand_index_ = (rand_index_ + 1) % kRandomiseTable.size();
    }
    rand_left_--;
    if (rand_left_ == 1) b ^= 1;
    if (run_ == 4) {
      const size_t k = std::min<size_t>(b, cap - n);
      std::memset(buf + n, last_, k);
      n += k;
      repeat_ = uint32_t(b - k);
      run_ = 0;
      continue;
    }
    buf[n++] = b;
    run_ = b == last_ ? run_ + 1 : 1;
    last_ = b;
  }
  return n;
}

}  // namespace gpbzip2
