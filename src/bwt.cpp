#include "bwt.h"

#include <divsufsort.h>

#include <algorithm>
#include <cstring>

#include "error.h"

namespace gpbzip2 {
namespace {

// Beyond this many misplaced suffixes the fix-up below costs more than prefix doubling.
constexpr int32_t kMaxFixup = 2048;

int compare_rotations(const uint8_t* t, int32_t n, int32_t a, int32_t b) {
  for (int32_t left = n; left > 0;) {
    int32_t run = std::min({left, n - a, n - b});
    if (int c = std::memcmp(t + a, t + b, size_t(run))) return c;
    left -= run;
    a += run;
    b += run;
    if (a == n) a = 0;
    if (b == n) b = 0;
  }
  return 0;
}

// Smallest p dividing n with t = w^(n/p), |w| = p (n if none), from the prefix function.
int32_t smallest_period(const uint8_t* t, int32_t n, std::vector<int32_t>& pi) {
  pi.assign(size_t(n), 0);
  for (int32_t i = 1; i < n; i++) {
    int32_t k = pi[size_t(i - 1)];
    while (k > 0 && t[i] != t[k]) k = pi[size_t(k - 1)];
    pi[size_t(i)] = k + (t[i] == t[k]);
  }
  int32_t p = n - pi[size_t(n - 1)];
  return n % p == 0 ? p : n;
}

// Length of the longest suffix of t that also occurs earlier in t, or `limit` + 1 if it
// is longer than `limit`. A suffix that occurs elsewhere is a prefix of its successor in
// suffix order, and if t[j..n) occurs elsewhere so does t[j+1..n).
int32_t repeated_suffix_length(const uint8_t* t, int32_t n, const int32_t* sa, int32_t limit,
                               std::vector<int32_t>& rank) {
  const int32_t window = std::min(n, limit + 1);
  const int32_t first = n - window;
  rank.assign(size_t(window), 0);
  for (int32_t i = 0; i < n; i++)
    if (sa[i] >= first) rank[size_t(sa[i] - first)] = i;
  int32_t len = 0;
  for (int32_t j = n - 1; j >= first; j--) {
    int32_t r = rank[size_t(j - first)];
    if (r + 1 >= n) break;
    int32_t next = sa[r + 1];
    if (next + (n - j) > n || std::memcmp(t + j, t + next, size_t(n - j)) != 0) break;
    len = n - j;
  }
  return len;
}

// A suffix sorter ranks a suffix before every longer suffix it is a prefix of; a rotation
// sort must compare past the end of the block instead. Only the last `count` suffixes can
// be prefixes of others, so they are taken out, sorted as rotations and merged back.
void fix_wrapped_suffixes(const uint8_t* t, int32_t n, int32_t count, int32_t* sa,
                          std::vector<int32_t>& aux) {
  aux.resize(2 * size_t(count));
  int32_t* moved = aux.data();
  int32_t* slot = aux.data() + count;
  int32_t kept = 0;
  for (int32_t i = 0; i < n; i++)
    if (sa[i] < n - count) sa[kept++] = sa[i];
  for (int32_t k = 0; k < count; k++) moved[k] = n - count + k;
  auto less = [&](int32_t a, int32_t b) { return compare_rotations(t, n, a, b) < 0; };
  std::sort(moved, moved + count, less);
  for (int32_t k = 0; k < count; k++)
    slot[k] = int32_t(std::lower_bound(sa, sa + kept, moved[k], less) - sa);
  int32_t src = kept - 1, dst = n - 1;
  for (int32_t k = count - 1; k >= 0; k--) {
    while (src >= slot[k]) sa[dst--] = sa[src--];
    sa[dst--] = moved[k];
  }
}

}  // namespace

void sort_rotations_doubling(const uint8_t* t, int32_t n, int32_t* sa, std::vector<int32_t>& aux) {
  aux.resize(size_t(n));
  int32_t* rank = aux.data();
  // Initial order by the first four bytes (cyclically), by LSD radix sort.
  std::vector<uint64_t> keyed(static_cast<size_t>(n)), tmp(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; i++) {
    uint32_t k = 0;
    for (int j = 0; j < 4; j++) k = k << 8 | t[(i + j) % n];
    keyed[size_t(i)] = uint64_t(k) << 32 | uint32_t(i);
  }
  for (int shift = 32; shift < 64; shift += 8) {
    size_t count[257] = {};
    for (uint64_t v : keyed) count[((v >> shift) & 0xff) + 1]++;
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (uint64_t v : keyed) tmp[count[(v >> shift) & 0xff]++] = v;
    keyed.swap(tmp);
  }
  // Ranks are the sorted position of the first member of a rotation's group: refining a
  // group keeps its members' ranks inside the group's range, so ranks read mid-round stay
  // consistent with the final order.
  struct Group {
    int32_t begin, end;
  };
  std::vector<Group> groups, next;
  for (int32_t i = 0; i < n;) {
    int32_t j = i + 1;
    while (j < n && (keyed[size_t(j)] >> 32) == (keyed[size_t(i)] >> 32)) j++;
    for (int32_t k = i; k < j; k++) {
      sa[k] = int32_t(uint32_t(keyed[size_t(k)]));
      rank[sa[k]] = i;
    }
    if (j - i > 1) groups.push_back({i, j});
    i = j;
  }
  for (int64_t h = 4; !groups.empty(); h *= 2) {
    if (h >= n) throw Error(ErrorKind::Internal, "prefix doubling on a periodic block");
    next.clear();
    for (Group g : groups) {
      int32_t len = g.end - g.begin;
      for (int32_t k = 0; k < len; k++) {
        int32_t i = sa[g.begin + k];
        keyed[size_t(k)] = uint64_t(uint32_t(rank[(i + h) % n])) << 32 | uint32_t(i);
      }
      std::sort(keyed.begin(), keyed.begin() + len);
      for (int32_t k = 0; k < len;) {
        int32_t j = k + 1;
        while (j < len && (keyed[size_t(j)] >> 32) == (keyed[size_t(k)] >> 32)) j++;
        for (int32_t m = k; m < j; m++) {
          int32_t i = int32_t(uint32_t(keyed[size_t(m)]));
          sa[g.begin + m] = i;
          rank[i] = g.begin + k;
        }
        if (j - k > 1) next.push_back({g.begin + k, g.begin + j});
        k = j;
      }
    }
    groups.swap(next);
  }
}

void bwt_forward(const uint8_t* t, int32_t n, BwtWorkspace& ws, BwtResult& out) {
  out.last.resize(size_t(n));
  ws.sa.resize(size_t(std::max(n, 1)));
  int32_t* sa = ws.sa.data();
  if (divsufsort(t, sa, n) != 0) throw Error(ErrorKind::Internal, "divsufsort failed");
  int32_t repeated = repeated_suffix_length(t, n, sa, kMaxFixup, ws.aux);
  // A periodic block repeats at least half of itself at its end; only such rare blocks
  // pay for the period test and a slower sort.
  if (repeated > kMaxFixup || 2 * repeated >= n) {
    if (smallest_period(t, n, ws.aux) < n)
      sort_rotations_bzip2_fallback(t, n, sa, ws.aux);
    else if (repeated > kMaxFixup)
      sort_rotations_doubling(t, n, sa, ws.aux);
    else
      fix_wrapped_suffixes(t, n, repeated, sa, ws.aux);
  } else if (repeated > 0) {
    fix_wrapped_suffixes(t, n, repeated, sa, ws.aux);
  }
  for (int32_t i = 0; i < n; i++) {
    int32_t j = sa[i];
    if (j == 0) out.orig_ptr = uint32_t(i);
    out.last[size_t(i)] = t[j == 0 ? n - 1 : j - 1];
  }
}

}  // namespace gpbzip2
