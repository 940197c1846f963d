// The rotation sort. A suffix sorter ranks a suffix before every longer suffix it is a
// prefix of, where a rotation sort compares past the block's end; the two orders agree
// for a Lyndon word (a block that is strictly smaller than all its other rotations), as
// no suffix of one is a prefix of it. So the block is turned to its least rotation and
// suffix-sorted whole (suffix_array.cpp, linear time): one exact sort, no fix-ups, no slow
// path (bench/README.md has the alternatives measured). Blocks of a few kB are sorted by
// prefix doubling instead, as rotations.
//
// A block that is not primitive (v repeated k times) has no Lyndon rotation, only u^k for
// the Lyndon word u of v's rotations: u alone is sorted, each of its rotations standing for
// k equal ones. Those share their last byte, so only origPtr depends on how they are
// ordered, and bwt_periodic.cpp gives bzip2's choice.
//
// A block cut from a periodic text at a length its period does not divide ("ab" repeated,
// cut at an odd length) is first of all: its order follows from its period's rotations.
#include "bwt.h"
#include "bwt_periodic.h"
#include "bwt_shared_sort.h"
#include "suffix_array.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/error.h"

namespace gpbzip2 {
namespace {

// Length of the common prefix of t's rotations i and j, up to n bytes: at most three
// straight stretches between the wraps.
int32_t rotation_common_prefix(const uint8_t* t, int32_t n, int32_t i, int32_t j) {
  int32_t done = 0;
  while (done < n) {
    const int32_t a = i + done < n ? i + done : i + done - n;
    const int32_t b = j + done < n ? j + done : j + done - n;
    const int32_t stretch = std::min({n - a, n - b, n - done});
    const int32_t k = common_prefix(t + a, t + b, stretch);
    done += k;
    if (k < stretch) break;
  }
  return done;
}

// Start of the least rotation of t, and whether t is periodic: two candidates, the larger
// dropped past the mismatch, O(n). Only positions holding t's least pair of bytes (read
// cyclically) can start it, so the candidates jump from one to the next through a bitmap
// of those. The least byte alone left up to a tenth of a block's positions as candidates
// (silesia's binary files), each a mispredicted step: 1.1 ms a -9 block on silesia
// against 0.18 now, about 3% of the sort (2-core Xeon VM). Neither candidate skips a
// start of the least rotation, so a periodic block, which has several, always ends with
// the two equal.
struct LeastRotation {
  int32_t start;
  bool periodic;
  int32_t distance;  // periodic: between two starts of the least rotation, a multiple of |u|
};
LeastRotation least_rotation(const uint8_t* t, int32_t n) {
  auto at = [&](int32_t x) { return t[x < n ? x : x - n]; };  // x < 2n
  auto pair = [&](int32_t x) { return uint32_t(t[x]) << 8 | at(x + 1); };
  uint32_t least = 0xFFFF;
  int32_t x = 0;
#ifdef __SSE2__
  {  // 16 pairs a step, as 16-bit lanes biased into signed order (SSE2 has no unsigned min)
    const __m128i bias = _mm_set1_epi16(int16_t(0x8000));
    __m128i low = _mm_set1_epi16(int16_t(0x7FFF));
    for (; x + 17 <= n; x += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + x));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + x + 1));
      low = _mm_min_epi16(low, _mm_xor_si128(_mm_unpacklo_epi8(b, a), bias));
      low = _mm_min_epi16(low, _mm_xor_si128(_mm_unpackhi_epi8(b, a), bias));
    }
    alignas(16) uint16_t lanes[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), _mm_xor_si128(low, bias));
    for (const uint16_t v : lanes) least = std::min<uint32_t>(least, v);
  }
#endif
  for (; x < n; x++) least = std::min(least, pair(x));
  const int32_t words = (n + 63) / 64;
  std::vector<uint64_t> starts(size_t(words), 0);  // bit x: t holds the least pair at x
  x = 0;
#ifdef __SSE2__
  {
    const __m128i first = _mm_set1_epi8(char(least >> 8)), second = _mm_set1_epi8(char(least));
    for (; x + 17 <= n; x += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + x));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + x + 1));
      const __m128i both = _mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, second));
      starts[size_t(x / 64)] |= uint64_t(uint32_t(_mm_movemask_epi8(both))) << (x % 64);
    }
  }
#endif
  for (; x < n; x++) starts[size_t(x / 64)] |= uint64_t(pair(x) == least) << (x % 64);
  auto next = [&](int32_t from) {  // first candidate >= from, or n
    if (from >= n) return n;
    int32_t w = from / 64;
    uint64_t m = starts[size_t(w)] & (~uint64_t(0) << (from % 64));
    while (m == 0) {
      if (++w == words) return n;
      m = starts[size_t(w)];
    }
    return w * 64 + __builtin_ctzll(m);
  };
  int32_t i = next(0), j = next(i + 1);
  while (i < n && j < n) {
    const int32_t k = rotation_common_prefix(t, n, i, j);
    if (k == n) return {std::min(i, j), true, std::abs(i - j)};
    if (at(i + k) > at(j + k))
      i = next(i + k + 1);
    else
      j = next(j + k + 1);
    if (i == j) j = next(j + 1);
  }
  return {std::min(i, j), false, 0};
}

// The least rotation of t, w (starting at `shift`), is u^k for a Lyndon word u; returns
// |u| (Duval's first factor). w repeats every `distance` bytes and every n, so every
// g = gcd of the two, and Duval's scan stops at g.
int32_t lyndon_period(const uint8_t* t, int32_t n, int32_t shift, int32_t distance) {
  const int32_t g = std::gcd(n, distance);
  auto w = [&](int32_t i) { return t[shift + i < n ? shift + i : shift + i - n]; };  // i < n
  int32_t j = 1, k = 0;
  for (; j < g && w(k) <= w(j); j++) k = w(k) < w(j) ? 0 : k + 1;
  const int32_t p = j - k;
  // t, a rotation of w, repeats every p bytes as w does.
  if (j != g || g % p != 0 || std::memcmp(t, t + p, size_t(n - p)) != 0)
    throw Error(ErrorKind::Internal, "BWT: block rotated to a non-least rotation");
  return p;
}

// Blocks up to this long are sorted by prefix doubling: libdivsufsort cleared and walked a
// 256 KB bucket array for any block, 0.2 ms of a 1 kB file's run on a 2-core Xeon VM, where
// doubling took 0.04 ms (4 kB: 0.13 against 0.31; the worst case here, `ab` repeated with
// one byte changed, 0.27 against 0.25). Against the induced sort, per block, us: 1 kB of
// text 19 against 21, of random bytes 9 against 18, of the tar 28 against 22; 4 kB 71 / 65,
// 32 / 64, 135 / 76 (session 29): mixed, so kept.
constexpr int32_t kDoublingMax = 4096;

// The rotations of w in order (w not periodic, so they are distinct), by prefix doubling:
// ranks by h bytes, then by 2h as the pairs of ranks h apart, with a counting sort on the
// first of each pair over an order already sorted by the second; within log2(n) rounds
// every rank differs.
void sort_rotations_by_doubling(const uint8_t* w, int32_t n, int32_t* sa,
                                std::vector<int32_t>& aux) {
  aux.assign(3 * size_t(n) + 257, 0);
  int32_t* rank = aux.data();
  int32_t* by_second = rank + n;
  int32_t* count = by_second + n;  // n + 1 entries, or 257 for the first round
  for (int32_t i = 0; i < n; i++) count[w[i] + 1]++;
  for (int c = 0; c < 256; c++) count[c + 1] += count[c];
  for (int32_t i = 0; i < n; i++) sa[count[w[i]]++] = i;
  int32_t ranks = 1;
  rank[sa[0]] = 0;
  for (int32_t r = 1; r < n; r++) {
    ranks += w[sa[r]] != w[sa[r - 1]];
    rank[sa[r]] = ranks - 1;
  }
  for (int32_t h = 1; ranks < n; h *= 2) {
    if (h >= n) throw Error(ErrorKind::Internal, "BWT: equal rotations in a non-periodic block");
    for (int32_t r = 0; r < n; r++) by_second[r] = sa[r] >= h ? sa[r] - h : sa[r] - h + n;
    std::fill(count, count + ranks + 1, 0);
    for (int32_t i = 0; i < n; i++) count[rank[i] + 1]++;
    for (int32_t c = 0; c < ranks; c++) count[c + 1] += count[c];
    for (int32_t r = 0; r < n; r++) sa[count[rank[by_second[r]]]++] = by_second[r];
    // New ranks into by_second, which is free now.
    int32_t* const next = by_second;
    auto ahead = [&](int32_t x) { return rank[x + h < n ? x + h : x + h - n]; };
    next[sa[0]] = 0;
    ranks = 1;
    for (int32_t r = 1; r < n; r++) {
      const int32_t a = sa[r], b = sa[r - 1];
      ranks += rank[a] != rank[b] || ahead(a) != ahead(b);
      next[a] = ranks - 1;
    }
    std::copy(next, next + n, rank);
  }
}

// A block cut from a periodic text at a length that is not a multiple of the period (a
// pattern repeated, `ab` cut at an odd length): t = U[0..n) for U = u repeated, |u| = p,
// 2p <= n, p not dividing n. libdivsufsort sorted its tandem repeats in O(n log n) and
// lbzip2 no faster, the suffix sort here in 1.7 times libdivsufsort's time; their order
// follows from u's rotations instead. Rotation z reads
// U[z..n) then U[0..z); after U[z..n) the text would go on with U[n..] = U[q..] (q = n mod
// p) and reads U[0..] instead, which differs after L = lcp(U[q..], U[0..]) < p bytes
// (u is primitive, p being the least period). So rotation z follows U from z for
// n - z + L bytes, then turns up where U[L] > U[q + L], down otherwise:
// - two rotations at the same offset mod p part where the later one turns, in the same
//   direction whichever they are: ordered by z, ascending where the turn is up;
// - two at different offsets differ where u's rotations do, within p bytes, before either
//   turns unless one starts in the last p - L bytes: those "tails" (under p of them) are
//   placed by comparisons; the rest is u's rotation order, each expanded by its offsets.
// Tried where p is at most this: the tails' comparisons take O(p^2 log n).
constexpr int32_t kCutPeriodMax = 4096;

// The least period p <= kCutPeriodMax of t with 2p <= n and p not dividing n, or 0. Only
// the first p at which t's first 64 bytes recur is checked (whole), so one pass at most.
int32_t cut_period(const uint8_t* t, int32_t n) {
  const int32_t most = std::min(kCutPeriodMax, n / 2);
  for (int32_t d = 1; d <= most; d++) {
    const void* at = std::memchr(t + d, t[0], size_t(most + 1 - d));
    if (!at) return 0;
    d = int32_t(static_cast<const uint8_t*>(at) - t);
    const int32_t probe = std::min(64, n - d);
    if (std::memcmp(t, t + d, size_t(probe)) != 0) continue;
    const bool period = std::memcmp(t + probe, t + d + probe, size_t(n - d - probe)) == 0;
    return period && n % d != 0 ? d : 0;
  }
  return 0;
}

// Whether rotation x of the cut block t (period p) is less than rotation y: piece by piece
// of U, where pieces at equal offsets mod p are equal and others differ within p bytes,
// read from t[0..2p).
bool cut_rotation_less(const uint8_t* t, int32_t n, int32_t p, int32_t x, int32_t y) {
  int32_t ox = x, rx = n - x, oy = y, ry = n - y;  // offset in U, bytes left of the piece
  for (int32_t done = 0; done < n;) {
    const int32_t m = std::min(rx, ry);
    const int32_t a = ox % p, b = oy % p;
    if (a != b) {
      const int32_t l = common_prefix(t + a, t + b, p);
      if (l < m) return t[a + l] < t[b + l];
    }
    done += m;
    ox += m, rx -= m, oy += m, ry -= m;
    if (rx == 0) ox = 0, rx = x;
    if (ry == 0) oy = 0, ry = y;
  }
  return false;
}

// The rotations of the cut block t (period p) in order, into sa[0..n).
void sort_cut_periodic(const uint8_t* t, int32_t n, int32_t p, int32_t* sa,
                       std::vector<int32_t>& aux) {
  const int32_t q = n % p;
  const int32_t turn = common_prefix(t, t + q, p);
  if (turn >= p) throw Error(ErrorKind::Internal, "BWT: cut block with a non-primitive period");
  const bool ascending = t[turn] > t[q + turn];
  const int32_t tail_from = n - p + turn + 1, tails = n - tail_from;
  // u's rotations (u primitive, so distinct) by doubling, copied out of sa for what follows.
  sort_rotations_by_doubling(t, p, sa, aux);
  std::vector<int32_t> u_order(sa, sa + p);
  // The others from sa[tails] on: u's order, each offset's positions by z.
  int32_t* out = sa + tails;
  for (const int32_t c : u_order) {
    const int32_t last = c + (tail_from - 1 - c) / p * p;  // c < p < tail_from
    if (ascending)
      for (int32_t z = c; z <= last; z += p) *out++ = z;
    else
      for (int32_t z = last; z >= c; z -= p) *out++ = z;
  }
  // Each tail's place among them, then the tails in order of place and of each other.
  const int32_t* const main = sa + tails;
  const int32_t main_count = n - tails;
  std::vector<std::pair<int32_t, int32_t>> placed;  // (place, rotation)
  placed.reserve(size_t(tails));
  for (int32_t x = tail_from; x < n; x++) {
    const int32_t place = int32_t(
        std::upper_bound(main, main + main_count, x,
                         [&](int32_t a, int32_t b) { return cut_rotation_less(t, n, p, a, b); }) -
        main);
    placed.push_back({place, x});
  }
  std::sort(placed.begin(), placed.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : cut_rotation_less(t, n, p, a.second, b.second);
  });
  // Merged from the front: what is written never passes what is still to be read.
  int32_t o = 0, m = tails;
  for (const auto& [place, x] : placed) {
    while (m - tails < place) sa[o++] = sa[m++];
    sa[o++] = x;
  }
  while (m < n) sa[o++] = sa[m++];
}

// The last column of the rotations of s listed in sa[0..n), written over sa as it is read
// (byte r lies in sa[r / 4], read by then), and where rotation `first` (t's rotation 0)
// is among them.
BwtView last_column(const uint8_t* s, int32_t n, int32_t* sa, int32_t first) {
  uint8_t* const last = reinterpret_cast<uint8_t*>(sa);
  uint32_t orig_ptr = 0;
  for (int32_t r = 0; r < n; r++) {
    const int32_t x = sa[r];
    if (x == first) orig_ptr = uint32_t(r);
    last[r] = s[(x == 0 ? n : x) - 1];
  }
  return {last, orig_ptr};
}

// Where the spare values start, and the bytes `sa` holds for a block of n.
size_t spare_offset(int32_t n) { return (size_t(n) + 15) & ~size_t(15); }
size_t scratch_bytes(int32_t n) {
  return std::max(4 * size_t(n), spare_offset(n) + 2 * (size_t(n) + BwtWorkspace::kSpareExtra));
}

}  // namespace

uint16_t* BwtWorkspace::spare(int32_t n) {
  resize_scratch(sa, scratch_bytes(n));
  return reinterpret_cast<uint16_t*>(sa.data() + spare_offset(n));
}

BwtView bwt_forward(const uint8_t* t, int32_t n, BwtWorkspace& ws, const Team* team) {
  if (const int32_t p = cut_period(t, n); p > 0) {
    resize_scratch(ws.sa, scratch_bytes(n));
    int32_t* const sa = reinterpret_cast<int32_t*>(ws.sa.data());
    sort_cut_periodic(t, n, p, sa, ws.aux);
    return last_column(t, n, sa, 0);
  }
  const LeastRotation least = n > 0 ? least_rotation(t, n) : LeastRotation{0, false, 0};
  const int32_t shift = least.start;
  // Past the arrays, `sa` holds the least rotation of a block that is not periodic.
  resize_scratch(ws.sa, scratch_bytes(n) + (least.periodic ? 0 : size_t(n)));
  int32_t* const sa = reinterpret_cast<int32_t*>(ws.sa.data());
  uint8_t* const last = ws.sa.data();
  if (n == 0) return {last, 0};
  if (!least.periodic) {
    // w: the least rotation. Rotation x of t is rotation (x - shift) mod n of w.
    uint8_t* const w = ws.sa.data() + scratch_bytes(n);
    std::memcpy(w, t + shift, size_t(n - shift));
    std::memcpy(w + (n - shift), t, size_t(shift));
    if (n <= kDoublingMax)
      sort_rotations_by_doubling(w, n, sa, ws.aux);
    else if (!team || !sort_rotations_shared(w, n, sa, *team))
      suffix_array(w, n, sa, ws.suffixes);
    return last_column(w, n, sa, (n - shift) % n);
  }
  const int32_t p = lyndon_period(t, n, shift, least.distance);
  if (bzip2_main_sort_may_finish(t, n, p)) {
    // t[n-1], then t twice, which bzip2's main sort reads rotations from straight.
    resize_scratch(ws.text, 2 * size_t(n) + 1);
    uint8_t* const text = ws.text.data();
    text[0] = t[n - 1];
    std::memcpy(text + 1, t, size_t(n));
    std::memcpy(text + 1 + n, t, size_t(n));
    // Where bzip2's main sort finishes, it is the whole BWT.
    if (bzip2_main_sort(text + 1, n, p, sa)) return last_column(t, n, sa, 0);
  }
  // u twice from the least rotation w = u^k, after w[-1] = w[n-1]: what the sort of u and
  // bzip2's fallback order read (the block itself only at its first byte's positions).
  resize_scratch(ws.text, 2 * size_t(p) + 1);
  uint8_t* const w = ws.text.data() + 1;
  for (int32_t i = -1, from = (shift + n - 1) % n; i < 2 * p;) {  // cyclic copy, whole stretches
    const int32_t len = std::min(n - from, 2 * p - i);
    std::memcpy(w + i, t + from, size_t(len));
    i += len;
    from = 0;
  }
  suffix_array(w, p, sa, ws.suffixes);
  // The bucket that bzip2's fallback order is followed on fits past u's rotations.
  const size_t spare_start = (4 * size_t(p) + 7) & ~size_t(7);
  const uint32_t orig_ptr = bzip2_fallback_orig_ptr({t, w, n, p, shift, sa}, ws.aux,
                                                    ws.sa.data() + spare_start,
                                                    ws.sa.size() - spare_start);
  // u = w[0, p) sorted stands for its k equal copies: u's last column, each byte k times,
  // spread from the top down so that no byte is overwritten before it is read.
  const int32_t k = n / p;
  for (int32_t r = 0; r < p; r++) last[r] = w[sa[r] - 1];
  for (int32_t r = p - 1; r >= 0; r--) std::memset(last + size_t(r) * size_t(k), last[r], size_t(k));
  return {last, orig_ptr};
}

bool orders_by_period(const uint8_t* block, int32_t n) { return cut_period(block, n) > 0; }

void bwt_forward(const uint8_t* t, int32_t n, BwtWorkspace& ws, BwtResult& out) {
  const BwtView v = bwt_forward(t, n, ws);
  out.last.assign(v.last, v.last + n);
  out.orig_ptr = v.orig_ptr;
}

}  // namespace gpbzip2
