// The rotation sort. A suffix sorter ranks a suffix before every longer suffix it is a
// prefix of, where a rotation sort compares past the block's end; the two orders agree
// for a Lyndon word (a block that is strictly smaller than all its other rotations), as
// no suffix of one is a prefix of it. So the block is turned to its least rotation and
// handed to libdivsufsort whole: one exact suffix sort, no fix-ups, no slow path
// (bench/README.md has the alternatives measured).
//
// A block that is not primitive (v repeated k times) has no Lyndon rotation, only u^k for
// the Lyndon word u of v's rotations: u alone is sorted, each of its rotations standing for
// k equal ones. Those share their last byte, so only origPtr depends on how they are
// ordered, and bwt_periodic.cpp gives bzip2's choice.
#include "bwt.h"
#include "bwt_periodic.h"

#include <divsufsort.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "common/error.h"

namespace gpbzip2 {
namespace {

// Start of the least rotation of t, given tt = t t, and whether t is periodic: two
// candidates, the larger dropped past the mismatch, O(n). Only positions holding t's
// smallest byte can start it, so the candidates jump from one to the next (memchr), which
// makes this a small part of the sort. Neither skips a start of the least rotation, so a
// periodic block, which has several, always ends with the two equal.
struct LeastRotation {
  int32_t start;
  bool periodic;
  int32_t distance;  // periodic: between two starts of the least rotation, a multiple of |u|
};
LeastRotation least_rotation(const uint8_t* tt, int32_t n) {
  uint8_t least = 255;
  for (int32_t x = 0; x < n; x++) least = std::min(least, tt[x]);
  auto next = [&](int32_t x) {  // first position >= x holding `least`, or n
    const void* at = x < n ? std::memchr(tt + x, least, size_t(n - x)) : nullptr;
    return at ? int32_t(static_cast<const uint8_t*>(at) - tt) : n;
  };
  int32_t i = next(0), j = next(i + 1);
  while (i < n && j < n) {
    const int32_t k = common_prefix(tt + i, tt + j, n);
    if (k == n) return {std::min(i, j), true, std::abs(i - j)};
    if (tt[i + k] > tt[j + k])
      i = next(i + k + 1);
    else
      j = next(j + k + 1);
    if (i == j) j = next(j + 1);
  }
  return {std::min(i, j), false, 0};
}

// w is a least rotation, so w = u^k for a Lyndon word u; returns |u| (Duval's first
// factor). w repeats every `distance` bytes and every n, so every g = gcd of the two, and
// Duval's scan stops at g.
int32_t lyndon_period(const uint8_t* w, int32_t n, int32_t distance) {
  const int32_t g = std::gcd(n, distance);
  int32_t j = 1, k = 0;
  for (; j < g && w[k] <= w[j]; j++) k = w[k] < w[j] ? 0 : k + 1;
  const int32_t p = j - k;
  if (j != g || g % p != 0 || std::memcmp(w, w + p, size_t(n - p)) != 0)
    throw Error(ErrorKind::Internal, "BWT: block rotated to a non-least rotation");
  return p;
}

}  // namespace

void bwt_forward(const uint8_t* t, int32_t n, BwtWorkspace& ws, BwtResult& out) {
  out.last.resize(size_t(n));
  out.orig_ptr = 0;
  if (n == 0) return;
  // t[n-1], then t twice: w below is the least rotation, with w[-1] = w[n-1].
  ws.text.resize(2 * size_t(n) + 1);
  uint8_t* text = ws.text.data();
  text[0] = t[n - 1];
  std::memcpy(text + 1, t, size_t(n));
  std::memcpy(text + 1 + n, t, size_t(n));
  const LeastRotation least = least_rotation(text + 1, n);
  const int32_t shift = least.start;
  const uint8_t* w = text + 1 + shift;
  const int32_t p = least.periodic ? lyndon_period(w, n, least.distance) : n;
  uint8_t* last = out.last.data();
  if (p < n) {
    // Where bzip2's main sort finishes on a periodic block, it is the whole BWT.
    ws.sa.resize(size_t(n));
    int32_t* order = ws.sa.data();
    if (bzip2_main_sort(text + 1, n, p, order)) {
      // text[x] = t[x - 1], text[0] = t[n - 1].
      for (int32_t r = 0; r < n; r++) {
        last[r] = text[order[r]];
        if (order[r] == 0) out.orig_ptr = uint32_t(r);
      }
      return;
    }
  }
  ws.sa.resize(size_t(p));
  int32_t* sa = ws.sa.data();
  if (divsufsort(w, sa, p) != 0) throw Error(ErrorKind::Internal, "divsufsort failed");
  if (p == n) {
    for (int32_t r = 0; r < n; r++) last[r] = w[sa[r] - 1];
    // Rotation x of t is rotation (x - shift) mod n of w.
    out.orig_ptr = uint32_t(std::find(sa, sa + n, (n - shift) % n) - sa);
    return;
  }
  const int32_t k = n / p;
  for (int32_t r = 0; r < p; r++) std::memset(last + size_t(r) * size_t(k), w[sa[r] - 1], size_t(k));
  out.orig_ptr = bzip2_fallback_orig_ptr({t, w, n, p, shift, sa}, ws.aux);
}

}  // namespace gpbzip2
