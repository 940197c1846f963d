#include "bwt.h"

#include <divsufsort.h>

#include <algorithm>
#include <cstring>

#include "error.h"

namespace gpbzip2 {
namespace {

// Beyond this many misplaced suffixes the fix-up below costs more than a doubling sort.
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

void bwt_forward(const uint8_t* t, int32_t n, BwtWorkspace& ws, BwtResult& out) {
  out.last.resize(size_t(n));
  ws.sa.resize(size_t(std::max(n, 1)));
  int32_t* sa = ws.sa.data();
  if (divsufsort(t, sa, n) != 0) throw Error(ErrorKind::Internal, "divsufsort failed");
  int32_t repeated = repeated_suffix_length(t, n, sa, kMaxFixup, ws.aux);
  // Periodic blocks (which repeat at least half of themselves at their end) need bzip2's
  // order of equal rotations; blocks whose end repeats too long for the fix-up are sorted
  // the same way, a doubling sort that stays O(n log n) on repetitive data.
  if (repeated > kMaxFixup || (2 * repeated >= n && smallest_period(t, n, ws.aux) < n)) {
    sort_rotations_bzip2_fallback(t, n, sa, ws.aux);
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
