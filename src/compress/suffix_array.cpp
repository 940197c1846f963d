// Suffix sorting by induced sorting (SA-IS). A suffix is S-type if it is less than the
// suffix after it, L-type if greater (the last suffix is L: the empty one after it is
// least); an S-type suffix after an L-type one is LMS. Once the LMS suffixes are in order
// at the ends of their first symbols' buckets, one pass left to right puts every L-type
// suffix in place from the suffix after it, and one right to left every S-type one. The
// LMS suffixes are ordered the same way from their substrings (LMS to LMS), named, and
// where names repeat, sorted as the suffixes of the string of names, recursively.
//
// Two changes to the textbook steps, both measured (bench/README.md):
// - Types are never stored: the L pass places only L-type and LMS suffixes, so the suffix
//   before one is L-type exactly where its symbol is not less; in the S pass a suffix is
//   S-type exactly where it lies in its bucket's S part.
// - Where at most half the LMS substrings repeat an earlier one (random and binary blocks,
//   most text), the ties are ordered by prefix doubling on the names instead of recursing
//   over all of them; a doubling that runs long (long repeats) gives way to recursion.
#include "suffix_array.h"

#include <algorithm>
#include <bit>

#include "bwt_periodic.h"
#include "common/error.h"

namespace gpbzip2 {
namespace {

// Levels of recursion: each is under half as long as the one above (neither end of a text
// is LMS, nor two neighbours), so a text of under 2^31 takes at most 31.
constexpr size_t kMaxLevels = 32;
// Doubling on names is tried where at most 1 in kTieShare LMS substrings repeats an
// earlier one, and gives up past kTieWork steps per LMS suffix (group members times the
// bit width of their group's size, summed over the rounds to come). On binary blocks 2 and
// 8 took 0.81 of libdivsufsort's time, 2 and 4 1.01, 2 and 2 0.89, 4 and 4 0.83, the rest
// alike; doubling every time took 1.08-1.15 on the tar's, silesia's and text blocks, where
// recursion takes 0.52-0.75.
constexpr int32_t kTieShare = 2;
constexpr int64_t kTieWork = 8;

// Set bits of x. std::popcount is a call into libgcc where the build does not assume
// POPCNT (x86-64's baseline): 2% of a block's sort.
int ones(uint64_t x) {
#ifdef __POPCNT__
  return std::popcount(x);
#else
  x -= (x >> 1) & 0x5555555555555555u;
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
  return int((x * 0x0101010101010101u) >> 56);
#endif
}

// Bit sets with counts a word: rank (set bits below x) in one count, and the set bits in
// order.
void count_before(const std::vector<uint64_t>& bits, std::vector<int32_t>& before) {
  before.resize(bits.size());
  int32_t count = 0;
  for (size_t w = 0; w < bits.size(); w++) {
    before[w] = count;
    count += ones(bits[w]);
  }
}
int32_t rank_of(const std::vector<uint64_t>& bits, const std::vector<int32_t>& before, int32_t x) {
  const size_t w = size_t(x) / 64;
  return before[w] + ones(bits[w] & ((uint64_t(1) << (x % 64)) - 1));
}
template <class F>
void for_each_bit(const std::vector<uint64_t>& bits, F f) {
  for (size_t w = 0; w < bits.size(); w++)
    for (uint64_t b = bits[w]; b != 0; b &= b - 1) f(int32_t(w * 64) + std::countr_zero(b));
}

template <class Char>
class InducedSort {
 public:
  InducedSort(const Char* t, int32_t n, int32_t k, int32_t* sa, SuffixArrayWorkspace& ws,
              size_t level)
      : t_(t), n_(n), k_(k), sa_(sa), ws_(ws), level_(ws.levels[level]), depth_(level) {}

  void run() {
    if (n_ == 1) {
      sa_[0] = 0;
      return;
    }
    std::vector<int32_t>& start = level_.start;
    start.assign(size_t(k_) + 1, 0);
    for (int32_t i = 0; i < n_; i++) start[size_t(t_[i]) + 1]++;
    for (int32_t c = 0; c < k_; c++) start[size_t(c) + 1] += start[size_t(c)];
    find_lms();
    sort_lms_substrings();
    const int32_t names = name_lms_substrings();
    order_lms_suffixes(names);
    // sa[0..n1): each LMS suffix's r (its place from the left) in order. As positions, at
    // their buckets' ends, then every suffix from them.
    int32_t* const at = sa_ + n1_;  // free now: n - n1 >= n1 entries
    int32_t r = 0;
    for_each_bit(level_.lms, [&](int32_t p) { at[r++] = p; });
    for (int32_t i = 0; i < n1_; i++) sa_[i] = at[sa_[i]];
    std::fill(sa_ + n1_, sa_ + n_, 0);
    set_tails();
    for (int32_t i = n1_ - 1; i >= 0; i--) {
      const int32_t p = sa_[i];
      sa_[i] = 0;
      sa_[--ws_.bucket[size_t(t_[p])]] = p;
    }
    induce();
  }

 private:
  // The LMS positions as bits, found without a branch a position.
  void find_lms() {
    std::vector<uint64_t>& lms = level_.lms;
    lms.assign(size_t(n_) / 64 + 1, 0);
    n1_ = 0;
    uint32_t s_after = 0;  // type of x (S = 1)
    uint64_t word = 0;     // bits of x's word from x up
    for (int32_t x = n_ - 1; x > 0; x--) {
      const Char a = t_[x - 1], b = t_[x];
      const uint32_t s = uint32_t(a < b) | (uint32_t(a == b) & s_after);  // type of x - 1
      const uint32_t is_lms = s_after & ~s;
      word |= uint64_t(is_lms) << (x % 64);
      n1_ += int32_t(is_lms);
      if (x % 64 == 0) {
        lms[size_t(x) / 64] = word;
        word = 0;
      }
      s_after = s;
    }
    lms[0] = word;
    count_before(lms, level_.lms_before);
  }
  // The first LMS position after p, or n.
  int32_t next_lms(int32_t p) const {
    const std::vector<uint64_t>& lms = level_.lms;
    size_t w = size_t(p) / 64;
    uint64_t b = lms[w] & (~uint64_t(1) << (p % 64));
    while (b == 0) {
      if (++w == lms.size()) return n_;
      b = lms[w];
    }
    return int32_t(w * 64) + std::countr_zero(b);
  }

  // sa[0..n1): the LMS positions in their substrings' order. The LMS suffixes go to their
  // buckets' ends in any order, and both passes run; 0 marks an empty slot (suffix 0
  // induces nothing either). Then the S-type suffixes after an L-type (a greater symbol)
  // are moved to the front: the S parts start where the S pass left the buckets' ends.
  void sort_lms_substrings() {
    std::fill(sa_, sa_ + n_, 0);
    set_tails();
    for_each_bit(level_.lms, [&](int32_t p) { sa_[--ws_.bucket[size_t(t_[p])]] = p; });
    induce();
    int32_t m = 0;
    for (int32_t c = 0; c < k_; c++)
      for (int32_t i = ws_.bucket[size_t(c)]; i < level_.start[size_t(c) + 1]; i++) {
        const int32_t v = sa_[i];
        sa_[m] = v;
        m += v > 0 && t_[v - 1] > t_[v];
      }
    if (m != n1_) throw Error(ErrorKind::Internal, "suffix sort: LMS suffixes miscounted");
  }

  // Names the sorted LMS substrings in order, equal ones alike, into sa[n - n1 + r] for the
  // r-th LMS position from the left, and turns sa[0..n1) into those r; returns how many
  // names.
  int32_t name_lms_substrings() {
    int32_t* const name = sa_ + n_ - n1_;
    int32_t names = 0, prev = 0, prev_len = 0;
    for (int32_t i = 0; i < n1_; i++) {
      const int32_t p = sa_[i];
      // To the next LMS position inclusive; the last runs into the end, which no other does.
      const int32_t len = next_lms(p) - p + 1;
      if (names == 0 || len != prev_len || p + len > n_ || prev + len > n_ ||
          !same_substring(p, prev, len)) {
        names++;
        prev = p;
        prev_len = len;
      }
      const int32_t r = rank_of(level_.lms, level_.lms_before, p);
      name[r] = names - 1;
      sa_[i] = r;
    }
    return names;
  }

  bool same_substring(int32_t x, int32_t y, int32_t len) const {
    if constexpr (sizeof(Char) == 1) {
      return common_prefix(reinterpret_cast<const uint8_t*>(t_) + x,
                           reinterpret_cast<const uint8_t*>(t_) + y, len) == len;
    } else {
      return std::equal(t_ + x, t_ + x + len, t_ + y);
    }
  }

  // From sa[0..n1) (each LMS position's r, in their substrings' order) and the names:
  // the same in suffix order. Where the names are unique it is; few ties are ordered by
  // doubling, the rest by recursion on the string of names (where the doubling gave up,
  // on its ranks renumbered: they name the same order).
  void order_lms_suffixes(int32_t names) {
    if (names == n1_) return;
    int32_t* const name = sa_ + n_ - n1_;
    const bool few_ties = int64_t(n1_ - names) * kTieShare <= n1_;
    if (few_ties && order_ties(name)) return;
    if (few_ties) names = renumber(name);
    InducedSort<int32_t>(name, n1_, names, sa_, ws_, depth_ + 1).run();
  }

  // Prefix doubling on the string of names: rank[r] (written over the names) is where r's
  // group starts in sa, and each round sorts each group by the rank h names on. False
  // where the rounds would take more than kTieWork steps per suffix.
  bool order_ties(int32_t* rank) {
    const int32_t n1 = n1_;
    auto& groups = ws_.groups;
    auto& next = ws_.next_groups;
    auto& members = ws_.members;  // a group's (rank h on, r)
    groups.clear();
    int32_t group_start = 0, prev = -1;
    for (int32_t i = 0; i < n1; i++) {
      const int32_t r = sa_[i];
      if (rank[r] != prev) {
        if (i - group_start > 1) groups.push_back({group_start, i});
        group_start = i;
        prev = rank[r];
      }
      rank[r] = group_start;
    }
    if (n1 - group_start > 1) groups.push_back({group_start, n1});
    int64_t work = 0;
    for (int32_t h = 1; !groups.empty(); h *= 2) {
      int64_t tied = 0;
      for (const auto& [from, to] : groups) {
        tied += to - from;
        work += int64_t(to - from) * std::bit_width(uint32_t(to - from));
      }
      if (work > kTieWork * n1) return false;
      // Every key before any rank of the round changes, past sa[0..n1) where they fit.
      int32_t* key = sa_ + n1;
      if (tied > n_ - 2 * int64_t(n1)) {
        ws_.keys.resize(size_t(tied));
        key = ws_.keys.data();
      }
      int32_t* k = key;
      for (const auto& [from, to] : groups)
        for (int32_t i = from; i < to; i++) *k++ = sa_[i] + h < n1 ? rank[sa_[i] + h] : -1;
      next.clear();
      k = key;
      for (const auto& [from, to] : groups) {
        members.clear();
        for (int32_t i = from; i < to; i++) members.push_back({*k++, sa_[i]});
        std::sort(members.begin(), members.end());
        int32_t part = from;
        for (int32_t i = from; i < to; i++) {
          const auto& [member_key, r] = members[size_t(i - from)];
          if (i > from && member_key != members[size_t(i - from - 1)].first) {
            if (i - part > 1) next.push_back({part, i});
            part = i;
          }
          sa_[i] = r;
          rank[r] = part;
        }
        if (to - part > 1) next.push_back({part, to});
      }
      std::swap(groups, next);
    }
    return true;
  }

  // order_ties' ranks (where groups start in sa[0..n1), which holds r with each group
  // together) numbered densely, so that the recursion's buckets are no more than its
  // groups; returns how many.
  int32_t renumber(int32_t* rank) {
    std::vector<uint64_t>& starts = ws_.group_starts;
    starts.assign(size_t(n1_) / 64 + 1, 0);
    for (int32_t i = 0; i < n1_; i++)
      starts[size_t(i) / 64] |= uint64_t(rank[sa_[i]] == i) << (i % 64);
    count_before(starts, ws_.group_starts_before);
    for (int32_t r = 0; r < n1_; r++) rank[r] = rank_of(starts, ws_.group_starts_before, rank[r]);
    return rank_of(starts, ws_.group_starts_before, n1_ - 1) + 1;
  }

  void set_tails() { ws_.bucket.assign(level_.start.begin() + 1, level_.start.end()); }

  // The L pass from the buckets' heads, then the S pass from their tails. In the S pass
  // every S-type suffix is placed before the scan reaches it, so a suffix at or past its
  // bucket's moving end is S-type, one before it L-type. The text, the array and the
  // buckets never overlap (a level's text lies past its array): said so, the compiler keeps
  // them in registers across the stores, 1-3% of a sort.
  void induce() {
    ws_.bucket.assign(level_.start.begin(), level_.start.end() - 1);
    int32_t* __restrict__ const sa = sa_;
    const Char* __restrict__ const t = t_;
    int32_t* __restrict__ const bucket = ws_.bucket.data();
    const int32_t n = n_;
    sa[bucket[size_t(t[n - 1])]++] = n - 1;
    for (int32_t i = 0; i < n; i++) {
      const int32_t v = sa[i];
      if (v <= 0) continue;
      const Char c = t[v - 1];
      if (c >= t[v]) sa[bucket[size_t(c)]++] = v - 1;
    }
    for (int32_t c = 0; c < k_; c++) bucket[c] = level_.start[size_t(c) + 1];
    for (int32_t i = n - 1; i >= 0; i--) {
      const int32_t v = sa[i];
      if (v <= 0) continue;
      const Char c = t[v - 1], cv = t[v];
      if (c < cv || (c == cv && i >= bucket[size_t(cv)])) sa[--bucket[size_t(c)]] = v - 1;
    }
  }

  const Char* const t_;
  const int32_t n_, k_;
  int32_t* const sa_;
  SuffixArrayWorkspace& ws_;
  // This level's bucket starts and LMS positions, kept through the recursion.
  SuffixArrayWorkspace::Level& level_;
  const size_t depth_;
  int32_t n1_ = 0;  // LMS positions
};

}  // namespace

void suffix_array(const uint8_t* t, int32_t n, int32_t* sa, SuffixArrayWorkspace& ws) {
  if (n <= 0) return;
  // Sized once: each level refers to its own entry through the recursion.
  if (ws.levels.size() < kMaxLevels) ws.levels.resize(kMaxLevels);
  InducedSort<uint8_t>(t, n, 256, sa, ws, 0).run();
}

}  // namespace gpbzip2
