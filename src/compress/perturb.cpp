#include "perturb.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "bwt.h"
#include "common/rand_table.h"

namespace gpbzip2 {
namespace {

// A rolling "gear" hash: h = 2h + gear[byte], so bit k of h depends on the last k + 1
// bytes and the top byte on the last 57 to 64. One step a byte, no multiply.
constexpr std::array<uint64_t, 256> kGear = [] {
  std::array<uint64_t, 256> g{};
  uint64_t s = 0x6a09e667f3bcc909u;  // splitmix64
  for (uint64_t& v : g) {
    uint64_t z = (s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    v = z ^ (z >> 31);
  }
  return g;
}();

// An anchor ends a 64-byte window whose hash has a zero top byte: one position in 256 on
// varied data, placed by content, so that both copies of a repeat have the same anchors.
constexpr uint64_t kAnchorBelow = uint64_t(1) << 56;
// Chunks are at least this long: an anchor this close to the chunk's start is skipped.
// Varied data has few such; a short period whose windows are anchors (two bytes over and
// over) would otherwise make a chunk every period, and the chunks cost more than the block.
constexpr uint32_t kMinChunk = 64;

// Hash of a chunk's bytes, sixteen at a time in two independent chains.
uint64_t chunk_hash(const uint8_t* p, size_t len) {
  constexpr uint64_t kMulA = 0x9fb21c651e98df25u, kMulB = 0xc2b2ae3d27d4eb4fu;
  uint64_t a = len * 0x9e3779b97f4a7c15u, b = ~a;
  size_t i = 0;
  for (; i + 16 <= len; i += 16) {
    uint64_t x, y;
    std::memcpy(&x, p + i, 8);
    std::memcpy(&y, p + i + 8, 8);
    a = (a ^ x) * kMulA;
    b = (b ^ y) * kMulB;
    a ^= a >> 29;
    b ^= b >> 31;
  }
  uint64_t x = 0, y = 0;
  std::memcpy(&x, p + i, std::min<size_t>(8, len - i));
  if (len - i > 8) std::memcpy(&y, p + i + 8, len - i - 8);
  a = (a ^ x) * kMulA;
  b = (b ^ y) * kMulB;
  const uint64_t h = (a ^ (b >> 32) ^ (b << 32)) * kMulA;
  return h ^ (h >> 32);
}

// The block cut at its anchors into chunks. Both copies of a repeat hold the same chunks
// but for the partial ones at its ends, so a repeat shows as a repeated run of chunks, a
// far smaller problem than the block's, whatever the distance between the copies.
struct Chunks {
  std::vector<uint32_t> start;   // chunk i is [start[i], start[i + 1]); the last start is n
  std::vector<uint64_t> prefix;  // prefix[i]: polynomial hash of the first i chunk hashes
  std::vector<uint64_t> power;   // kBase^i
  uint32_t longest = 0;          // bytes in the longest chunk
  static constexpr uint64_t kBase = 0xd6e8feb86659fd93u;

  Chunks(const uint8_t* t, size_t n) {
    start.push_back(0);
    find_anchors(t, n);
    if (start.back() != n) start.push_back(uint32_t(n));
    const size_t m = start.size() - 1;
    prefix.resize(m + 1);
    power.resize(m + 1);
    prefix[0] = 0;
    power[0] = 1;
    for (size_t i = 0; i < m; i++) {
      const uint32_t len = start[i + 1] - start[i];
      longest = std::max(longest, len);
      prefix[i + 1] = prefix[i] * kBase + chunk_hash(t + start[i], len);
      power[i + 1] = power[i] * kBase;
    }
  }

  // Appends the chunk starts (each anchor + 1, kMinChunk apart within a quarter and where
  // quarters join) in order. The hash is one chain of dependent steps, so four lanes hash
  // a quarter of the block each, interleaved; a lane first hashes the 63 bytes before its
  // quarter, which is all its first anchors depend on (the top byte holds the last 64
  // bytes' terms and their carries, no older).
  void find_anchors(const uint8_t* t, size_t n) {
    constexpr size_t kLanes = 4;
    size_t from[kLanes + 1];
    for (size_t k = 0; k <= kLanes; k++) from[k] = k * n / kLanes;
    uint64_t h[kLanes] = {};
    if (from[1] < 64) from[1] = from[2] = from[3] = 0;  // a small block: lane 3 alone
    for (size_t k = 1; k < kLanes; k++)
      for (size_t x = from[k] >= 63 ? from[k] - 63 : 0; x < from[k]; x++)
        h[k] = (h[k] << 1) + kGear[t[x]];
    std::vector<uint32_t> found[kLanes];
    size_t last[kLanes];  // the lane's last kept anchor + 1
    for (size_t k = 0; k < kLanes; k++) last[k] = from[k] >= kMinChunk ? from[k] - kMinChunk : 0;
    auto keep = [&](size_t k, size_t s) {
      if (s - last[k] < kMinChunk) return;
      found[k].push_back(uint32_t(s));
      last[k] = s;
    };
    const size_t common = from[1] - from[0];  // lanes are this long or one byte longer
    // Four named hashes, so that they stay in registers.
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2], h3 = h[3];
    const uint8_t *t0 = t + from[0], *t1 = t + from[1], *t2 = t + from[2], *t3 = t + from[3];
    for (size_t i = 0; i < common; i++) {
      h0 = (h0 << 1) + kGear[t0[i]];
      h1 = (h1 << 1) + kGear[t1[i]];
      h2 = (h2 << 1) + kGear[t2[i]];
      h3 = (h3 << 1) + kGear[t3[i]];
      if (std::min(std::min(h0, h1), std::min(h2, h3)) < kAnchorBelow) [[unlikely]] {
        if (h0 < kAnchorBelow) keep(0, from[0] + i + 1);
        if (h1 < kAnchorBelow) keep(1, from[1] + i + 1);
        if (h2 < kAnchorBelow) keep(2, from[2] + i + 1);
        if (h3 < kAnchorBelow) keep(3, from[3] + i + 1);
      }
    }
    h[0] = h0, h[1] = h1, h[2] = h2, h[3] = h3;
    for (size_t k = 0; k < kLanes; k++) {
      for (size_t x = from[k] + common; x < from[k + 1]; x++) {
        h[k] = (h[k] << 1) + kGear[t[x]];
        if (h[k] < kAnchorBelow) keep(k, x + 1);
      }
      for (uint32_t s : found[k])
        if (s - start.back() >= kMinChunk) start.push_back(s);
    }
  }

  // Whether some run of whole chunks at least `bytes` long occurs twice (the two may
  // overlap: a periodic stretch repeats at its period).
  bool repeat_of(uint32_t bytes, std::vector<uint64_t>& seen) const {
    const size_t m = start.size() - 1;
    const size_t slots = std::bit_ceil(2 * m + 2);
    seen.assign(slots, 0);
    for (size_t j = 0, k = 0; j < m; j++) {
      while (k <= m && start[k] - start[j] < bytes) k++;
      if (k > m) break;
      // The run j..k-1 and its length in chunks, as one nonzero key.
      const uint64_t key =
          ((prefix[k] - prefix[j] * power[k - j]) ^ ((k - j) * 0xc2b2ae3d27d4eb4fu)) | 1;
      for (size_t i = size_t(key >> 7) & (slots - 1);; i = (i + 1) & (slots - 1)) {
        if (seen[i] == key) return true;
        if (seen[i] == 0) {
          seen[i] = key;
          break;
        }
      }
    }
    return false;
  }
};

}  // namespace

// A chunk as long as the longest repeat is a stretch without anchors: its 64-byte windows
// take few values, which only repetitive content does (a short period; a long run, which
// the first run-length coding leaves as four bytes and a count, again and again).
uint32_t estimate_longest_repeat(const uint8_t* block, size_t n) {
  const Chunks c(block, n);
  std::vector<uint64_t> seen;
  // The longest whole-chunk repeat, by bisection: there is one of every length below it.
  uint32_t lo = 0, hi = uint32_t(n);
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (c.repeat_of(mid, seen))
      lo = mid;
    else
      hi = mid - 1;
  }
  return std::max(lo, c.longest);
}

bool sort_would_be_deep(const uint8_t* block, size_t n) {
  if (n <= kDeepPrefix) return false;
  const Chunks c(block, n);
  std::vector<uint64_t> seen;
  return c.longest >= kDeepPrefix || c.repeat_of(kDeepPrefix, seen);
}

uint32_t longest_flip_aligned_repeat(const uint8_t* t, size_t n) {
  uint32_t best = 0;
  for (size_t d = kRandomisePeriod; d < n; d += kRandomisePeriod) {
    // Runs of equal bytes, eight a step: a word with a mismatch ends one run (its equal
    // low bytes) and starts the next (its equal high bytes; shorter runs within it are
    // too short to matter).
    uint32_t run = 0;
    size_t i = 0;
    for (; i + 8 <= n - d; i += 8) {
      uint64_t x, y;
      std::memcpy(&x, t + i, 8);
      std::memcpy(&y, t + d + i, 8);
      if (x == y) {
        run += 8;
        continue;
      }
      best = std::max(best, run + uint32_t(std::countr_zero(x ^ y)) / 8);
      run = uint32_t(std::countl_zero(x ^ y)) / 8;
    }
    for (; i < n - d; i++) {
      run = t[i] == t[d + i] ? run + 1 : 0;
      best = std::max(best, run);
    }
    best = std::max(best, run);
  }
  return best;
}

bool worth_perturbing(const uint8_t* block, size_t n) {
  return !orders_by_period(block, int32_t(n)) && sort_would_be_deep(block, n) &&
         longest_flip_aligned_repeat(block, n) < kDeepPrefix;
}

bool perturb_if_deep(uint8_t* block, size_t n) {
  if (!worth_perturbing(block, n)) return false;
  flip_randomised_bits(block, n);
  return true;
}

}  // namespace gpbzip2
