#include "block_encoder.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "format.h"
#include "huffman.h"

namespace gpbzip2 {
namespace {

using format::kGroupSize;
using format::kMaxAlphaSize;
using format::kMaxGroups;

typedef uint16_t CostLanes __attribute__((vector_size(16)));

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

// Moves c (not at the front) to the front of the list and returns its old position.
// Most symbols sit within the first eight entries, so those are searched and shifted as
// one 64-bit word; the rest uses memchr and memmove.
inline int move_to_front_of(uint8_t* order, uint8_t c) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    uint64_t w;
    std::memcpy(&w, order, 8);
    uint64_t x = w ^ (kOnes * c);
    uint64_t hit = (x - kOnes) & ~x & kHigh;  // the lowest flagged byte is exact
    if (hit) {
      int j = std::countr_zero(hit) >> 3;
      uint64_t moved = j == 7 ? ~0ull : (uint64_t(1) << (8 * (j + 1))) - 1;
      w = (w & ~moved) | ((w << 8) & moved) | c;
      std::memcpy(order, &w, 8);
      return j;
    }
  }
  int j = int(static_cast<const uint8_t*>(std::memchr(order, c, 256)) - order);
  std::memmove(order + 1, order, size_t(j));
  order[0] = c;
  return j;
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
    int j = move_to_front_of(order, c);
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
    // Two counter sets, alternating by position: runs of one symbol would otherwise
    // chain every increment on the previous one.
    int32_t freq[2][kMaxGroups][kMaxAlphaSize] = {};
    // The costs of all tables for one symbol in 16-bit lanes, summed with one vector add
    // per symbol: a group costs at most 50 * 17.
    CostLanes cost_of[kMaxAlphaSize];
    for (int v = 0; v < st.alpha; v++) {
      CostLanes c = {};
      for (int t = 0; t < groups; t++) c[t] = len[t][v];
      cost_of[v] = c;
    }
    nsel = 0;
    for (int32_t gs = 0; gs < st.count; gs += kGroupSize) {
      int32_t ge = std::min(gs + kGroupSize, st.count);
      CostLanes sum = {};
      for (int32_t i = gs; i < ge; i++) sum += cost_of[mtf[i]];
      int best = 0;
      uint32_t best_cost = sum[0];
      for (int t = 1; t < groups; t++) {
        uint32_t c = sum[t];
        if (c < best_cost) {
          best_cost = c;
          best = t;
        }
      }
      selectors[nsel++] = uint8_t(best);
      int32_t i = gs;
      for (; i + 1 < ge; i += 2) {
        freq[0][best][mtf[i]]++;
        freq[1][best][mtf[i + 1]]++;
      }
      if (i < ge) freq[0][best][mtf[i]]++;
    }
    for (int t = 0; t < groups; t++) {
      for (int v = 0; v < st.alpha; v++) freq[0][t][v] += freq[1][t][v];
      make_code_lengths(len[t], freq[0][t], st.alpha, format::kEncodeCodeLen);
    }
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
