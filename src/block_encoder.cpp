#include "block_encoder.h"

#include <algorithm>
#include <cstring>

#include "format.h"
#include "huffman.h"

namespace gpbzip2 {
namespace {

using format::kGroupSize;
using format::kMaxAlphaSize;
using format::kMaxGroups;

struct SymbolStats {
  int32_t count = 0;  // symbols written to ws.mtf, EOB included
  int alpha = 0;      // symbols in use + RUNA/RUNB + EOB - 1
  int32_t freq[kMaxAlphaSize] = {};
};

// bzip2 writes a run of z zeros as z+1 in bijective base 2, digits RUNA=1 and RUNB=2,
// least significant first, leaving out the leading 1.
inline uint16_t* put_zero_run(uint16_t* w, uint32_t z, int32_t* freq) {
  for (z--;; z = (z - 2) / 2) {
    uint16_t s = (z & 1) ? format::kRunB : format::kRunA;
    *w++ = s;
    freq[s]++;
    if (z < 2) break;
  }
  return w;
}

SymbolStats move_to_front(const uint8_t* last, int32_t n, const bool* in_use, uint16_t* out) {
  SymbolStats st;
  uint8_t to_seq[256];
  int used = 0;
  for (int c = 0; c < 256; c++)
    if (in_use[c]) to_seq[c] = uint8_t(used++);
  st.alpha = used + 2;
  const uint16_t eob = uint16_t(used + 1);

  uint8_t order[256];
  for (int i = 0; i < 256; i++) order[i] = uint8_t(i);
  uint16_t* w = out;
  uint32_t zeros = 0;
  for (int32_t i = 0; i < n; i++) {
    uint8_t c = to_seq[last[i]];
    if (order[0] == c) {
      zeros++;
      continue;
    }
    if (zeros) {
      w = put_zero_run(w, zeros, st.freq);
      zeros = 0;
    }
    // Shift the list down until c is found, then put c in front.
    uint8_t prev = order[0];
    int j = 1;
    for (;; j++) {
      uint8_t cur = order[j];
      order[j] = prev;
      if (cur == c) break;
      prev = cur;
    }
    order[0] = c;
    *w++ = uint16_t(j + 1);
    st.freq[j + 1]++;
  }
  if (zeros) w = put_zero_run(w, zeros, st.freq);
  *w++ = eob;
  st.freq[eob]++;
  st.count = int32_t(w - out);
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

// Four rounds of: give each 50-symbol group the cheapest table, then rebuild every table
// from the symbols it was given.
int32_t choose_tables(const uint16_t* mtf, const SymbolStats& st, int groups,
                      uint8_t (*len)[kMaxAlphaSize], uint8_t* selectors) {
  int32_t nsel = 0;
  for (int iter = 0; iter < format::kTableIterations; iter++) {
    int32_t freq[kMaxGroups][kMaxAlphaSize] = {};
    // Costs of up to 6 tables packed as 16-bit lanes: a group costs at most 50 * 17.
    uint64_t lo[kMaxAlphaSize], hi[kMaxAlphaSize];
    for (int v = 0; v < st.alpha; v++) {
      uint64_t a = 0, b = 0;
      for (int t = 0; t < groups && t < 4; t++) a |= uint64_t(len[t][v]) << (16 * t);
      for (int t = 4; t < groups; t++) b |= uint64_t(len[t][v]) << (16 * (t - 4));
      lo[v] = a;
      hi[v] = b;
    }
    nsel = 0;
    for (int32_t gs = 0; gs < st.count; gs += kGroupSize) {
      int32_t ge = std::min(gs + kGroupSize, st.count);
      uint64_t ca = 0, cb = 0;
      for (int32_t i = gs; i < ge; i++) {
        ca += lo[mtf[i]];
        cb += hi[mtf[i]];
      }
      int best = 0;
      uint32_t best_cost = uint32_t(ca & 0xffff);
      for (int t = 1; t < groups; t++) {
        uint32_t c = uint32_t((t < 4 ? ca >> (16 * t) : cb >> (16 * (t - 4))) & 0xffff);
        if (c < best_cost) {
          best_cost = c;
          best = t;
        }
      }
      selectors[nsel++] = uint8_t(best);
      for (int32_t i = gs; i < ge; i++) freq[best][mtf[i]]++;
    }
    for (int t = 0; t < groups; t++) make_code_lengths(len[t], freq[t], st.alpha, format::kEncodeCodeLen);
  }
  return nsel;
}

}  // namespace

void encode_block(const uint8_t* last, int32_t n, uint32_t orig_ptr, uint32_t block_crc,
                  EncoderWorkspace& ws, BitWriter& out) {
  bool in_use[256] = {};
  for (int32_t i = 0; i < n; i++) in_use[last[i]] = true;
  ws.mtf.resize(size_t(n) + 1);
  SymbolStats st = move_to_front(last, n, in_use, ws.mtf.data());

  const int groups = group_count(st.count);
  uint8_t len[kMaxGroups][kMaxAlphaSize];
  initial_lengths(st, groups, len);
  ws.selectors.resize(size_t(st.count / kGroupSize + 1));
  const int32_t nsel = choose_tables(ws.mtf.data(), st, groups, len, ws.selectors.data());

  out.put48(format::kBlockMagic);
  out.put(32, block_crc);
  out.put(1, 0);  // not randomised
  out.put(24, orig_ptr);

  bool used16[16] = {};
  for (int c = 0; c < 256; c++) used16[c >> 4] |= in_use[c];
  for (int i = 0; i < 16; i++) out.put(1, used16[i]);
  for (int i = 0; i < 16; i++)
    if (used16[i])
      for (int j = 0; j < 16; j++) out.put(1, in_use[i * 16 + j]);

  out.put(3, uint32_t(groups));
  out.put(15, uint32_t(nsel));
  uint8_t order[kMaxGroups] = {0, 1, 2, 3, 4, 5};
  for (int32_t i = 0; i < nsel; i++) {
    uint8_t s = ws.selectors[size_t(i)];
    int j = 0;
    while (order[j] != s) j++;
    std::memmove(order + 1, order, size_t(j));
    order[0] = s;
    out.put(j + 1, (1u << (j + 1)) - 2);  // j ones, then a zero
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

  uint32_t code[kMaxGroups][kMaxAlphaSize];
  for (int t = 0; t < groups; t++) assign_codes(code[t], len[t], st.alpha);
  const uint16_t* mtf = ws.mtf.data();
  for (int32_t s = 0, gs = 0; gs < st.count; s++, gs += kGroupSize) {
    const int t = ws.selectors[size_t(s)];
    const int32_t ge = std::min(gs + kGroupSize, st.count);
    for (int32_t i = gs; i < ge; i++) out.put(len[t][mtf[i]], code[t][mtf[i]]);
  }
}

}  // namespace gpbzip2
