// bzip2's order of equal rotations. In a periodic block (v repeated k times) the k
// rotations equal to rotation 0 share their last byte, so of all the BWT only origPtr
// depends on how they are ordered, and bzip2's order is whatever its sort leaves. Blocks
// of 10000 bytes or more go to its main sort, which on most periodic blocks runs out of
// its work budget (bzip2_main_sort.cpp); the rest go to its fallback sort, a
// Manber-Myers style doubling whose buckets are split by a three-way quicksort with a
// fixed pseudo-random pivot sequence. That sort is followed here on the one bucket that
// holds rotation 0, with the keys it would see read off the sorted rotations of u. The
// steps and constants are bzip2's (blocksort.c, bzip2 1.0.8, Julian Seward, BSD-style
// licence), written anew here.
#include <algorithm>
#include <vector>

#include "bwt.h"
#include "bwt_periodic.h"

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

// Where bzip2's fallback sort leaves rotation 0 among the k rotations equal to it.
int32_t fallback_tie_offset(const PeriodicBlock& b, std::vector<int32_t>& aux) {
  const int32_t n = b.n, p = b.p, k = n / p;
  const int32_t* sa = b.sa;
  aux.resize(3 * size_t(p));
  int32_t* rank = aux.data();     // of u's rotations
  int32_t* lcp = rank + p;        // lcp[r]: common prefix of u's rotations ranked r-1 and r
  int32_t* group = lcp + p;       // group[r]: first rank sharing h bytes with rank r
  for (int32_t r = 0; r < p; r++) rank[sa[r]] = r;
  // Kasai's walk, on rotations: u's rotations are distinct, and w holds u twice.
  for (int32_t i = 0, h = 0; i < p; i++) {
    const int32_t r = rank[i];
    if (r == 0) {
      h = 0;
      continue;
    }
    h += common_prefix(b.w + i + h, b.w + sa[r - 1] + h, p - h);
    lcp[r] = h;
    if (h > 0) h--;
  }
  // Rotation x of t is rotation (x - shift) mod p of u.
  const int32_t sp = b.shift % p;
  auto u_rotation = [&](int64_t x) { return int32_t((x % p + p - sp) % p); };

  // bzip2's first bucket of rotation 0: every position holding t[0], filled from the
  // bucket's end in increasing position order.
  std::vector<int32_t> bucket, key, order;
  for (int32_t x = n - 1; x >= 0; x--)
    if (b.t[x] == b.t[0]) bucket.push_back(x);
  // A bucket of k rotations holds just the ones equal to rotation 0: keys tie from then on
  // and the quicksort leaves them in place.
  for (int64_t h = 1; int32_t(bucket.size()) > k && h <= n; h *= 2) {
    // Key of x: the bucket, by h bytes, of rotation x + h; bucket starts by rank of u
    // order the same way as bzip2's by position (each of u's rotations stands for k).
    group[0] = 0;
    for (int32_t r = 1; r < p; r++) group[r] = lcp[r] < h ? r : group[r - 1];
    const int32_t size = int32_t(bucket.size());
    key.resize(size_t(size));
    order.resize(size_t(size));
    for (int32_t i = 0; i < size; i++) {
      key[size_t(i)] = group[rank[u_rotation(bucket[size_t(i)] + h)]];
      order[size_t(i)] = i;
    }
    quicksort3(order.data(), key.data(), 0, size - 1);
    const int32_t key0 = key[size_t(std::find(bucket.begin(), bucket.end(), 0) - bucket.begin())];
    std::vector<int32_t> next;
    for (int32_t i : order)
      if (key[size_t(i)] == key0) next.push_back(bucket[size_t(i)]);
    bucket.swap(next);
  }
  return int32_t(std::find(bucket.begin(), bucket.end(), 0) - bucket.begin());
}

}  // namespace

uint32_t bzip2_fallback_orig_ptr(const PeriodicBlock& b, std::vector<int32_t>& aux) {
  // Each of u's rotations stands for k equal ones of t, in u's order.
  const int32_t start = (b.n - b.shift) % b.n % b.p;
  const int32_t rank0 = int32_t(std::find(b.sa, b.sa + b.p, start) - b.sa);
  return uint32_t(rank0) * uint32_t(b.n / b.p) + uint32_t(fallback_tie_offset(b, aux));
}

}  // namespace gpbzip2
