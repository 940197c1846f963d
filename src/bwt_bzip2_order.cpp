// bzip2's order of equal rotations. In a periodic block (w repeated) equal rotations
// have equal last bytes, so only origPtr depends on how they are ordered, and bzip2's
// order is whatever its fallback sort leaves: a Manber-Myers style doubling whose buckets
// are split by a three-way quicksort with a fixed pseudo-random pivot sequence. Periodic
// blocks always end up there (the main sort exhausts its work budget on them), so this
// reproduces that sort's permutation step for step.
#include <algorithm>
#include <vector>

#include "bwt.h"

namespace gpbzip2 {
namespace {

// Insertion sorts by key: first with stride 4, then 1 (bzip2's order of moves).
void small_sort(int32_t* fmap, const int32_t* key, int32_t lo, int32_t hi) {
  if (lo == hi) return;
  for (int stride : {4, 1}) {
    if (stride == 4 && hi - lo <= 3) continue;
    for (int32_t i = hi - stride; i >= lo; i--) {
      int32_t v = fmap[i], kv = key[v], j = i + stride;
      for (; j <= hi && kv > key[fmap[j]]; j += stride) fmap[j - stride] = fmap[j];
      fmap[j - stride] = v;
    }
  }
}

void quicksort3(int32_t* fmap, const int32_t* key, int32_t lo0, int32_t hi0) {
  struct Range {
    int32_t lo, hi;
  };
  std::vector<Range> stack{{lo0, hi0}};
  uint32_t r = 0;
  while (!stack.empty()) {
    auto [lo, hi] = stack.back();
    stack.pop_back();
    if (hi - lo < 10) {
      small_sort(fmap, key, lo, hi);
      continue;
    }
    r = (r * 7621 + 1) % 32768;
    int32_t pivot = key[fmap[r % 3 == 0 ? lo : r % 3 == 1 ? (lo + hi) >> 1 : hi]];
    // Partition into [= | < | unknown | > | =], then move the equal ends to the middle.
    int32_t un_lo = lo, lt_lo = lo, un_hi = hi, gt_hi = hi;
    for (;;) {
      for (; un_lo <= un_hi; un_lo++) {
        int32_t d = key[fmap[un_lo]] - pivot;
        if (d > 0) break;
        if (d == 0) std::swap(fmap[un_lo], fmap[lt_lo++]);
      }
      for (; un_lo <= un_hi; un_hi--) {
        int32_t d = key[fmap[un_hi]] - pivot;
        if (d < 0) break;
        if (d == 0) std::swap(fmap[un_hi], fmap[gt_hi--]);
      }
      if (un_lo > un_hi) break;
      std::swap(fmap[un_lo++], fmap[un_hi--]);
    }
    if (gt_hi < lt_lo) continue;  // all equal
    int32_t k = std::min(lt_lo - lo, un_lo - lt_lo);
    std::swap_ranges(fmap + lo, fmap + lo + k, fmap + un_lo - k);
    k = std::min(hi - gt_hi, gt_hi - un_hi);
    std::swap_ranges(fmap + un_lo, fmap + un_lo + k, fmap + hi - k + 1);
    int32_t less_end = lo + un_lo - lt_lo - 1;
    int32_t greater_begin = hi - (gt_hi - un_hi) + 1;
    // The larger part is pushed first, so the smaller is sorted first.
    if (less_end - lo > hi - greater_begin) {
      stack.push_back({lo, less_end});
      stack.push_back({greater_begin, hi});
    } else {
      stack.push_back({greater_begin, hi});
      stack.push_back({lo, less_end});
    }
  }
}

}  // namespace

void sort_rotations_bzip2_fallback(const uint8_t* t, int32_t n, int32_t* fmap,
                                   std::vector<int32_t>& aux) {
  aux.assign(size_t(n) * 2 + 1, 0);
  int32_t* key = aux.data();
  int32_t* head = aux.data() + n;  // head[i] != 0: position i starts a bucket; head[n] is set
  // One-byte buckets, each filled from its end in increasing position order.
  int32_t start[257] = {};
  for (int32_t i = 0; i < n; i++) start[t[i] + 1]++;
  for (int c = 0; c < 256; c++) start[c + 1] += start[c];
  int32_t fill[256];
  for (int c = 0; c < 256; c++) {
    fill[c] = start[c + 1];
    head[start[c]] = 1;
  }
  for (int32_t i = 0; i < n; i++) fmap[--fill[t[i]]] = i;
  head[n] = 1;

  for (int64_t h = 1;; h *= 2) {
    for (int32_t i = 0, b = 0; i < n; i++) {
      if (head[i]) b = i;
      int64_t k = fmap[i] - h;
      key[k < 0 ? k + n : k] = b;
    }
    int64_t unresolved = 0;
    for (int32_t l = 0; l < n;) {
      int32_t r = l + 1;
      while (!head[r]) r++;
      if (r - l > 1) {
        unresolved += r - l;
        quicksort3(fmap, key, l, r - 1);
        for (int32_t i = l, prev = -1; i < r; i++) {
          int32_t c = key[fmap[i]];
          if (c != prev) head[i] = 1;
          prev = c;
        }
      }
      l = r;
    }
    if (h * 2 > n || unresolved == 0) break;
  }
}

}  // namespace gpbzip2
