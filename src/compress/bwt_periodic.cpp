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
#include "common/huge_pages.h"

namespace gpbzip2 {
namespace {

// The sort moves items: a rotation's key in the high bits, its position in the low ones,
// so each comparison reads the item it moves (bzip2 moves positions and looks their keys
// up; the order of moves is the same). Four bytes an item where the keys (under p) and
// positions (under 2^20, bzip2's blocks being shorter) fit: blocks of short periods, whose
// bucket is most of the block.
template <class Item>
constexpr int kPosBits = sizeof(Item) == 4 ? 20 : 32;
template <class Item>
uint32_t key_of(Item item) {
  return uint32_t(item >> kPosBits<Item>);
}
template <class Item>
int32_t position_of(Item item) {
  return int32_t(item & ((Item(1) << kPosBits<Item>) - 1));
}

// Insertion sorts by key: first with stride 4, then 1 (bzip2's order of moves).
template <class Item>
void small_sort(Item* item, int32_t lo, int32_t hi) {
  if (lo == hi) return;
  for (int stride : {4, 1}) {
    if (stride == 4 && hi - lo <= 3) continue;
    for (int32_t i = hi - stride; i >= lo; i--) {
      const Item v = item[i];
      int32_t j = i + stride;
      for (; j <= hi && key_of(v) > key_of(item[j]); j += stride) item[j - stride] = item[j];
      item[j - stride] = v;
    }
  }
}

template <class Item>
void quicksort3(Item* item, int32_t lo0, int32_t hi0) {
  struct Range {
    int32_t lo, hi;
  };
  std::vector<Range> stack{{lo0, hi0}};
  uint32_t r = 0;
  while (!stack.empty()) {
    auto [lo, hi] = stack.back();
    stack.pop_back();
    if (hi - lo < 10) {
      small_sort(item, lo, hi);
      continue;
    }
    r = (r * 7621 + 1) % 32768;
    const uint32_t pivot = key_of(item[r % 3 == 0 ? lo : r % 3 == 1 ? (lo + hi) >> 1 : hi]);
    // Partition into [= | < | unknown | > | =], then move the equal ends to the middle.
    int32_t un_lo = lo, lt_lo = lo, un_hi = hi, gt_hi = hi;
    for (;;) {
      for (; un_lo <= un_hi; un_lo++) {
        const uint32_t key = key_of(item[un_lo]);
        if (key > pivot) break;
        if (key == pivot) std::swap(item[un_lo], item[lt_lo++]);
      }
      for (; un_lo <= un_hi; un_hi--) {
        const uint32_t key = key_of(item[un_hi]);
        if (key < pivot) break;
        if (key == pivot) std::swap(item[un_hi], item[gt_hi--]);
      }
      if (un_lo > un_hi) break;
      std::swap(item[un_lo++], item[un_hi--]);
    }
    if (gt_hi < lt_lo) continue;  // all equal
    int32_t k = std::min(lt_lo - lo, un_lo - lt_lo);
    std::swap_ranges(item + lo, item + lo + k, item + un_lo - k);
    k = std::min(hi - gt_hi, gt_hi - un_hi);
    std::swap_ranges(item + un_lo, item + un_lo + k, item + hi - k + 1);
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

// bzip2's fallback sort followed on the bucket of rotation 0, from its first bucket (every
// position holding t[0]) until it holds the k rotations equal to rotation 0: where rotation
// 0 is among them. rank: of u's rotations; group(h): for each rank of u, the first rank
// that shares h bytes with it. Rotation x of t is rotation u_rotation(x) of u.
template <class Item, class Group, class URotation>
int32_t follow_bucket(const PeriodicBlock& b, const int32_t* rank, Group group,
                      URotation u_rotation, uint8_t* spare, size_t spare_bytes) {
  const int32_t n = b.n, k = n / b.p;
  // In the caller's spare bytes where it fits, as it does but where t[0] fills much of
  // the block. Filled from the bucket's end in increasing position order, as bzip2's.
  const size_t size = size_t(std::count(b.t, b.t + b.p, b.t[0])) * size_t(k);
  HugePageVector<Item> own;
  if (size * sizeof(Item) > spare_bytes) own.resize(size);
  Item* const bucket = own.empty() ? reinterpret_cast<Item*>(spare) : own.data();
  size_t filled = 0;
  for (int32_t x = n - 1; x >= 0; x--)
    if (b.t[x] == b.t[0]) bucket[filled++] = Item(x);
  // A bucket of k rotations holds just the ones equal to rotation 0: keys tie from then on
  // and the quicksort leaves them in place.
  for (int64_t h = 1; filled > size_t(k) && h <= n; h *= 2) {
    // Key of x: the bucket, by h bytes, of rotation x + h; bucket starts by rank of u
    // order the same way as bzip2's by position (each of u's rotations stands for k).
    const int32_t* first = group(h);
    auto key = [&](int64_t x) { return Item(first[rank[u_rotation(x + h)]]); };
    for (size_t i = 0; i < filled; i++) {
      const int32_t x = position_of(bucket[i]);
      bucket[i] = key(x) << kPosBits<Item> | Item(x);
    }
    quicksort3(bucket, 0, int32_t(filled) - 1);
    // Rotation 0's bucket by 2h bytes, in the order the sort left it.
    const uint32_t key0 = uint32_t(key(0));
    size_t kept = 0;
    for (size_t i = 0; i < filled; i++)
      if (key_of(bucket[i]) == key0) bucket[kept++] = bucket[i];
    filled = kept;
  }
  return int32_t(std::find_if(bucket, bucket + filled,
                              [](Item item) { return position_of(item) == 0; }) -
                 bucket);
}

// Where bzip2's fallback sort leaves rotation 0 among the k rotations equal to it.
int32_t fallback_tie_offset(const PeriodicBlock& b, std::vector<int32_t>& aux, uint8_t* spare,
                            size_t spare_bytes) {
  const int32_t n = b.n, p = b.p;
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
  auto group_by = [&](int64_t h) {
    group[0] = 0;
    for (int32_t r = 1; r < p; r++) group[r] = lcp[r] < h ? r : group[r - 1];
    return static_cast<const int32_t*>(group);
  };
  const int32_t sp = b.shift % p;
  auto u_rotation = [&](int64_t x) { return int32_t((x % p + p - sp) % p); };
  if (p <= 1 << (32 - kPosBits<uint32_t>) && n <= 1 << kPosBits<uint32_t>)
    return follow_bucket<uint32_t>(b, rank, group_by, u_rotation, spare, spare_bytes);
  return follow_bucket<uint64_t>(b, rank, group_by, u_rotation, spare, spare_bytes);
}

}  // namespace

uint32_t bzip2_fallback_orig_ptr(const PeriodicBlock& b, std::vector<int32_t>& aux,
                                 uint8_t* spare, size_t spare_bytes) {
  // Each of u's rotations stands for k equal ones of t, in u's order.
  const int32_t start = (b.n - b.shift) % b.n % b.p;
  const int32_t rank0 = int32_t(std::find(b.sa, b.sa + b.p, start) - b.sa);
  const int32_t offset = fallback_tie_offset(b, aux, spare, spare_bytes);
  return uint32_t(rank0) * uint32_t(b.n / b.p) + uint32_t(offset);
}

}  // namespace gpbzip2
