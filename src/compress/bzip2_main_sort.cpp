// bzip2's main sort, followed step for step, for the one place where its order shows in
// the output: origPtr of a periodic block. It bucket-sorts rotations by two bytes, sorts
// big buckets smallest first by multikey quicksort then shell sort, derives other buckets'
// order from finished ones, and keeps per-position ranks ("quadrants") of finished big
// buckets to shorten later comparisons. Comparisons past 12 bytes cost one unit of a
// budget of 9 per byte (work factor 30) each 8 positions; past it bzip2 abandons the sort
// for its fallback. Equal rotations compare to the end of the block, so most periodic
// blocks exhaust the budget, and a bound tells most of those apart before any sorting.
// The algorithm and its constants are bzip2's (blocksort.c, bzip2 1.0.8, Julian Seward,
// BSD-style licence); this is our own code for the same steps, which the bytes require.
#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <vector>

#include "bwt_periodic.h"
#include "common/error.h"
#include "common/huge_pages.h"

namespace gpbzip2 {
namespace {

constexpr int32_t kRadixDepth = 2;     // bytes the bucket sort ranks by
constexpr int32_t kQsortDepth = 14;    // past this depth the shell sort takes over
constexpr int32_t kQsortSmall = 20;    // ranges under this size too
constexpr int32_t kBudgetPerByte = 9;  // (work factor 30 - 1) / 3

// Length of the common prefix of a[0..limit) and b[0..limit), four entries a step.
int32_t common_prefix16(const uint16_t* a, const uint16_t* b, int32_t limit) {
  return common_prefix(reinterpret_cast<const uint8_t*>(a), reinterpret_cast<const uint8_t*>(b),
                       2 * limit) / 2;
}

// x mod p for x < 2^32 by two multiplications (Lemire's fastmod) instead of a division.
struct FastMod {
  explicit FastMod(uint32_t divisor) : p(divisor), m(~uint64_t(0) / divisor + 1) {}
  uint32_t operator()(uint32_t x) const {
    return uint32_t((static_cast<unsigned __int128>(m * x) * p) >> 64);
  }
  uint32_t p;
  uint64_t m;
};

class MainSort {
 public:
  MainSort(const uint8_t* tt, int32_t n, int32_t p, int32_t* ptr)
      : n_(n), p_(p), mod_p_(uint32_t(p)), budget_(int64_t(n) * kBudgetPerByte), block_(tt),
        ptr_(ptr) {
    if (n > int32_t(kPosMask)) throw Error(ErrorKind::Internal, "bzip2_main_sort: block too long");
    resize_scratch(quadrant_, size_t(n + kWrap));  // zeros
  }

  bool run();

 private:
  uint32_t pair(int32_t i) const { return uint32_t(block_[i]) << 8 | block_[i + 1]; }
  static constexpr int32_t kCachedQuadrants = 16;
  struct Record {
    uint64_t key0;
    uint32_t key1;
    int32_t pos, residue;  // residue: (pos + d) mod p, equal for equal rotations
    uint16_t quadrant[kCachedQuadrants];
  };
  bool greater(const Record& x, const Record& y, int32_t d);
  bool greater_after12(int32_t i1, int32_t i2, bool equal, int32_t from);
  void shell_sort(int32_t lo, int32_t hi, int32_t d, const uint64_t* packed);
  void quicksort(int32_t lo, int32_t hi, int32_t d);
  void set_quadrant(int32_t i, uint16_t v) {
    quadrant_[size_t(i)] = v;
    if (i < kWrap) quadrant_[size_t(i + n_)] = v;
  }
  static constexpr int32_t kWrap = 128;  // n >= kMainSortMin > kWrap

  const int32_t n_, p_;
  const FastMod mod_p_;
  int64_t budget_;
  bool quadrants_set_ = false;
  // The block twice (its caller's). Cyclic reads start under n + 43 (an offset under
  // n + 15, 12 bytes, 16 cached quadrants) and run 64 positions at most before they are
  // brought back under n, so quadrants are kept repeated kWrap positions past n.
  const uint8_t* const block_;
  HugePageVector<uint16_t> quadrant_;
  // The quicksort's words: a position and 5 of its bytes.
  static constexpr int kPosBits = 24, kKeyBytes = (64 - kPosBits) / 8;
  static constexpr uint64_t kPosMask = (uint64_t(1) << kPosBits) - 1;
  std::vector<uint64_t> key_;
  std::vector<Record> records_;  // a shell sort's rotations
  std::vector<int32_t> index_;
  struct Range {  // the quicksort's
    int32_t lo, hi, d, kd;
  };
  std::vector<Range> stack_;
  int32_t* const ptr_;  // n entries
};

// Is the rotation at i1 - 12 greater than the one at i2 - 12, their first 12 bytes equal?
// (byte, quadrant) pairs in steps of 8 until n + 8 positions are past, one unit of budget
// a step; those before `from` (a multiple of 8) are known equal. Looked at 64 positions at
// a time: quadrants often decide long before the bytes would. Rotations a period apart
// (`equal`) have equal bytes: only quadrants can tell them apart, and before the first big
// bucket is finished nothing can.
bool MainSort::greater_after12(int32_t i1, int32_t i2, bool equal, int32_t from) {
  const uint8_t* b = block_;
  const uint16_t* q = quadrant_.data();
  const int32_t steps = (n_ + 8) / 8 + 1, span = 8 * steps;
  if (equal && !quadrants_set_) {
    budget_ -= steps;
    return false;
  }
  for (int32_t at = from; at < span; at += 64) {
    // i + at is under 2n + 43: taken back under n + 43 where it is n or more.
    const int32_t c1 = i1 + at - (i1 + at >= n_ ? n_ : 0);
    const int32_t c2 = i2 + at - (i2 + at >= n_ ? n_ : 0);
    const int32_t len = std::min(64, span - at);
    const int32_t mb = equal ? len : common_prefix(b + c1, b + c2, len);
    const int32_t mq = common_prefix16(q + c1, q + c2, std::min(len, mb + 1));
    if (mb == len && mq >= len) continue;
    const int32_t x = std::min(mb, mq);
    budget_ -= (at + x) / 8;
    return mb <= mq ? b[c1 + x] > b[c2 + x] : q[c1 + x] > q[c2 + x];
  }
  budget_ -= steps;
  return false;
}

// bzip2's comparison (mainGtU) of the rotations at x.pos + d and y.pos + d: their first
// 12 bytes from the records' keys (rotations a period apart skip them: equal), and for
// those, the first kCachedQuadrants quadrants after them from the records too.
bool MainSort::greater(const Record& x, const Record& y, int32_t d) {
  const bool equal = x.residue == y.residue;
  if (!equal) {
    if (x.key0 != y.key0) return x.key0 > y.key0;
    if (x.key1 != y.key1) return x.key1 > y.key1;
    return greater_after12(x.pos + d + 12, y.pos + d + 12, false, 0);
  }
  if (!quadrants_set_) return greater_after12(x.pos + d + 12, y.pos + d + 12, true, 0);
  const int32_t mq = common_prefix16(x.quadrant, y.quadrant, kCachedQuadrants);
  if (mq < kCachedQuadrants) {
    budget_ -= mq / 8;
    return x.quadrant[mq] > y.quadrant[mq];
  }
  return greater_after12(x.pos + d + 12, y.pos + d + 12, true, kCachedQuadrants);
}

// The rotations of a range are read once each, before the shell sort starts: their 12
// bytes past depth d as two big-endian keys, and the first kCachedQuadrants quadrants
// after those. The insertions then move indices into these records: the same
// comparisons as bzip2's, without two cache misses for each.
void MainSort::shell_sort(int32_t lo, int32_t hi, int32_t d, const uint64_t* packed) {
  static constexpr int32_t kIncrements[] = {1,     4,     13,     40,     121,    364,     1093,
                                            3280,  9841,  29524,  88573,  265720, 797161, 2391484};
  const int32_t count = hi - lo + 1;
  if (count < 2) {
    if (count == 1) ptr_[lo] = int32_t(packed[lo] & kPosMask);
    return;
  }
  records_.resize(size_t(count));
  index_.resize(size_t(count));
  const uint8_t* b = block_;
  for (int32_t i = 0; i < count; i++) {
    Record& r = records_[size_t(i)];
    r.pos = int32_t(packed[lo + i] & kPosMask);
    const uint8_t* at = b + r.pos + d;
    uint64_t k0;
    uint32_t k1;
    std::memcpy(&k0, at, 8);
    std::memcpy(&k1, at + 8, 4);
    r.key0 = __builtin_bswap64(k0);
    r.key1 = __builtin_bswap32(k1);
    r.residue = int32_t(mod_p_(uint32_t(r.pos + d)));
    if (quadrants_set_)
      std::memcpy(r.quadrant, quadrant_.data() + r.pos + d + 12, sizeof r.quadrant);
    index_[size_t(i)] = i;
  }
  const Record* rec = records_.data();
  int32_t* idx = index_.data();
  int hp = 0;
  while (kIncrements[hp] < count) hp++;
  for (hp--; hp >= 0; hp--) {
    const int32_t h = kIncrements[hp];
    // Insertions go in threes between budget checks.
    for (int32_t i = h; i < count;) {
      for (int c = 0; c < 3 && i < count; c++, i++) {
        const int32_t v = idx[i];
        int32_t j = i;
        while (greater(rec[idx[j - h]], rec[v], d)) {
          idx[j] = idx[j - h];
          j -= h;
          if (j <= h - 1) break;
        }
        idx[j] = v;
      }
      if (budget_ < 0) return;
    }
  }
  for (int32_t i = 0; i < count; i++) ptr_[lo + i] = rec[idx[i]].pos;
}

// Multikey quicksort on the byte at depth d, median of three; the parts are pushed
// largest first so the smallest is sorted first. It moves one word per rotation: its
// position in the low kPosBits bits and its bytes at depths kd..kd+4 above them, read
// once every 5 depths, so a pass reads its byte there instead of the block: the same
// partitions in sequential memory. The shell sorts at its leaves write ptr_ back.
void MainSort::quicksort(int32_t lo0, int32_t hi0, int32_t d0) {
  const uint8_t* b = block_;
  key_.resize(size_t(hi0 - lo0 + 1));
  uint64_t* key = key_.data() - lo0;
  for (int32_t i = lo0; i <= hi0; i++) key[i] = uint64_t(ptr_[i]);
  auto load_keys = [&](int32_t lo, int32_t hi, int32_t d) {
    for (int32_t i = lo; i <= hi; i++) {
      const uint64_t pos = key[i] & kPosMask;
      uint64_t bytes;
      std::memcpy(&bytes, b + pos + uint64_t(d), 8);
      key[i] = bytes << kPosBits | pos;
    }
  };
  load_keys(lo0, hi0, d0);
  std::vector<Range>& stack = stack_;
  stack.assign(1, {lo0, hi0, d0, d0});
  while (!stack.empty()) {
    auto [lo, hi, d, kd] = stack.back();
    stack.pop_back();
    if (hi - lo < kQsortSmall || d > kQsortDepth) {
      shell_sort(lo, hi, d, key);
      if (budget_ < 0) return;
      continue;
    }
    if (d - kd == kKeyBytes) {
      load_keys(lo, hi, d);
      kd = d;
    }
    const int shift = kPosBits + 8 * (d - kd);
    // Where every rotation of the range has the same byte at d, bzip2's partition swaps
    // each with itself and goes on at d + 1: those passes are skipped, all the bytes the
    // keys hold at once.
    {
      uint64_t differ = 0;
      for (int32_t i = lo + 1; i <= hi; i++) differ |= key[i] ^ key[lo];
      differ >>= shift;
      if ((differ & 0xFF) == 0) {
        const int32_t same = differ == 0 ? kKeyBytes - (d - kd) : __builtin_ctzll(differ) / 8;
        stack.push_back({lo, hi, std::min(d + same, kQsortDepth + 1), kd});
        continue;
      }
    }
    auto byte_at = [&](int32_t i) { return int32_t(uint8_t(key[i] >> shift)); };
    std::array<int32_t, 3> m3 = {byte_at(lo), byte_at(hi), byte_at((lo + hi) >> 1)};
    std::sort(m3.begin(), m3.end());
    const int32_t pivot = m3[1];
    // Partition into [= | < | unknown | > | =], then move the equal ends to the middle.
    // The swaps of equal bytes to the ends are done whether or not (an element with
    // itself), so that only the end of a scan is a branch.
    auto swap_if = [&](bool swap, int32_t i, int32_t j) {
      const uint64_t ki = key[i], kj = key[j];
      key[j] = swap ? ki : kj;
      key[i] = swap ? kj : ki;
    };
    int32_t un_lo = lo, lt_lo = lo, un_hi = hi, gt_hi = hi;
    for (;;) {
      for (; un_lo <= un_hi; un_lo++) {
        const int32_t c = byte_at(un_lo) - pivot;
        if (c > 0) break;
        swap_if(c == 0, un_lo, lt_lo);
        lt_lo += c == 0;
      }
      for (; un_lo <= un_hi; un_hi--) {
        const int32_t c = byte_at(un_hi) - pivot;
        if (c < 0) break;
        swap_if(c == 0, un_hi, gt_hi);
        gt_hi -= c == 0;
      }
      if (un_lo > un_hi) break;
      std::swap(key[un_lo++], key[un_hi--]);
    }
    if (gt_hi < lt_lo) {
      stack.push_back({lo, hi, d + 1, kd});
      continue;
    }
    int32_t k = std::min(lt_lo - lo, un_lo - lt_lo);
    std::swap_ranges(key + lo, key + lo + k, key + un_lo - k);
    k = std::min(hi - gt_hi, gt_hi - un_hi);
    std::swap_ranges(key + un_lo, key + un_lo + k, key + hi - k + 1);
    const int32_t less_end = lo + un_lo - lt_lo - 1;
    const int32_t greater_begin = hi - (gt_hi - un_hi) + 1;
    Range next[3] = {{lo, less_end, d, kd}, {greater_begin, hi, d, kd}, {less_end + 1, greater_begin - 1, d + 1, kd}};
    auto size = [&](int i) { return next[i].hi - next[i].lo; };
    if (size(0) < size(1)) std::swap(next[0], next[1]);
    if (size(1) < size(2)) std::swap(next[1], next[2]);
    if (size(0) < size(1)) std::swap(next[0], next[1]);
    for (const Range& r : next) stack.push_back(r);
  }
}

bool MainSort::run() {
  // Buckets by the first two bytes, each in increasing position order: the bucket's
  // positions under p, then the same plus p, plus 2p...; so only the first period is
  // scattered, and each bucket copied on from its first part.
  const int32_t copies = n_ / p_;
  std::vector<int32_t> start(65537, 0);
  for (int32_t i = 0; i < p_; i++) start[pair(i) + 1]++;
  for (size_t s = 1; s < start.size(); s++) start[s] = start[s - 1] + copies * start[s];
  {
    std::vector<int32_t> fill(start.begin(), start.end() - 1);
    for (int32_t i = 0; i < p_; i++) ptr_[fill[pair(i)]++] = i;
    for (size_t s = 0; s + 1 < start.size(); s++) {
      int32_t* bucket = ptr_ + start[s];
      const int32_t len = fill[s] - start[s];
      for (int32_t c = 1; c < copies; c++)
        for (int32_t x = 0; x < len; x++) bucket[c * len + x] = bucket[x] + c * p_;
    }
  }
  auto big_size = [&](int c) { return start[size_t(c + 1) << 8] - start[size_t(c) << 8]; };

  // Big buckets smallest first, in the order bzip2's shell sort leaves equal sizes.
  std::array<int, 256> order;
  for (int i = 0; i < 256; i++) order[size_t(i)] = i;
  for (int h : {121, 40, 13, 4, 1})
    for (int i = h; i < 256; i++) {
      const int v = order[size_t(i)];
      int j = i;
      while (big_size(order[size_t(j - h)]) > big_size(v)) {
        order[size_t(j)] = order[size_t(j - h)];
        j -= h;
        if (j <= h - 1) break;
      }
      order[size_t(j)] = v;
    }

  std::vector<bool> sorted(65536, false);
  std::array<bool, 256> big_done{};
  for (int i = 0; i < 256; i++) {
    const int ss = order[size_t(i)];
    // Sort the small buckets [ss, j] no earlier step has ordered.
    for (int j = 0; j < 256; j++) {
      if (j == ss) continue;
      const size_t sb = size_t(ss) << 8 | size_t(j);
      if (!sorted[sb] && start[sb + 1] - 1 > start[sb]) {
        quicksort(start[sb], start[sb + 1] - 1, kRadixDepth);
        if (budget_ < 0) return false;
      }
      sorted[sb] = true;
    }
    // The big bucket [ss] now gives the order of every bucket [c, ss], [ss, ss] included:
    // scanned from both ends, each rotation's predecessor goes to its bucket's next slot.
    std::array<int32_t, 256> copy_start, copy_end;
    for (int c = 0; c < 256; c++) {
      copy_start[size_t(c)] = start[size_t(c) << 8 | size_t(ss)];
      copy_end[size_t(c)] = start[(size_t(c) << 8 | size_t(ss)) + 1] - 1;
    }
    for (int32_t j = start[size_t(ss) << 8]; j < copy_start[size_t(ss)]; j++) {
      const int32_t k = ptr_[j] == 0 ? n_ - 1 : ptr_[j] - 1;
      const uint8_t c = block_[k];
      if (!big_done[c]) ptr_[size_t(copy_start[c]++)] = k;
    }
    for (int32_t j = start[size_t(ss + 1) << 8] - 1; j > copy_end[size_t(ss)]; j--) {
      const int32_t k = ptr_[j] == 0 ? n_ - 1 : ptr_[j] - 1;
      const uint8_t c = block_[k];
      if (!big_done[c]) ptr_[size_t(copy_end[c]--)] = k;
    }
    for (int c = 0; c < 256; c++) sorted[size_t(c) << 8 | size_t(ss)] = true;
    big_done[size_t(ss)] = true;
    // Ranks within the finished big bucket, scaled to 16 bits (pointless after the last).
    if (i < 255) {
      const int32_t bb_start = start[size_t(ss) << 8], bb_size = big_size(ss);
      int shifts = 0;
      while ((bb_size >> shifts) > 65534) shifts++;
      for (int32_t j = bb_size - 1; j >= 0; j--)
        set_quadrant(ptr_[bb_start + j], uint16_t(j >> shifts));
      quadrants_set_ |= bb_size > 0;
    }
  }
  return budget_ >= 0;
}

// Before the first big bucket with rotations is finished no quadrant is set, and in its
// small buckets each set of k equal rotations costs at least k - 1 comparisons of the
// whole block (an insertion stops only at an equal rotation already placed).
bool budget_surely_exhausted(const uint8_t* t, int32_t n, int32_t p) {
  std::array<int32_t, 256> count{};
  for (int32_t i = 0; i < p; i++) count[t[i]]++;
  // The first bucket in bzip2's order is a smallest non-empty one; a bound over every
  // smallest would need their order, so take the least bound among them.
  int32_t smallest = p;
  for (int32_t c : count)
    if (c > 0) smallest = std::min(smallest, c);
  int64_t least = INT64_MAX;
  const int64_t k = n / p, steps = (n + 8) / 8 + 1;
  for (int c = 0; c < 256; c++) {
    if (count[size_t(c)] != smallest) continue;
    int64_t classes = 0;  // rotations of v starting c x with x != c
    for (int32_t i = 0; i < p; i++) classes += t[i] == c && t[i + 1 == p ? 0 : i + 1] != c;
    least = std::min(least, classes * (k - 1) * steps);
  }
  return least > int64_t(n) * kBudgetPerByte;
}

}  // namespace

bool bzip2_main_sort_may_finish(const uint8_t* t, int32_t n, int32_t p) {
  return n >= kMainSortMin && !budget_surely_exhausted(t, n, p);
}

bool bzip2_main_sort(const uint8_t* tt, int32_t n, int32_t p, int32_t* order) {
  return MainSort(tt, n, p, order).run();
}

}  // namespace gpbzip2
