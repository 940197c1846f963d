// The decoder's inverse BWT (chains walked several at a time, then stitched) against the
// text the BWT came from and against a plain one-chain inverse, on blocks of every shape.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>
#include <string>

#include "decompress/block_decoder.h"
#include "compress/bwt.h"
#include "generators.h"

using gpbzip2::BlockDecoder;
using gpbzip2::corpus::generate;

namespace {

struct Bwt {
  std::vector<uint8_t> last;
  uint32_t orig_ptr;
};

// Sorts the rotations by comparing them byte by byte: slow, for small blocks.
Bwt naive_bwt(const std::vector<uint8_t>& text) {
  const size_t n = text.size();
  std::vector<uint32_t> rot(n);
  std::iota(rot.begin(), rot.end(), 0u);
  std::sort(rot.begin(), rot.end(), [&](uint32_t a, uint32_t b) {
    for (size_t k = 0; k < n; k++) {
      const uint8_t x = text[(a + k) % n], y = text[(b + k) % n];
      if (x != y) return x < y;
    }
    return false;
  });
  Bwt r{std::vector<uint8_t>(n), 0};
  for (size_t i = 0; i < n; i++) {
    r.last[i] = text[(rot[i] + n - 1) % n];
    if (rot[i] == 0) r.orig_ptr = uint32_t(i);
  }
  return r;
}

Bwt fast_bwt(const std::vector<uint8_t>& text) {
  gpbzip2::BwtWorkspace ws;
  gpbzip2::BwtResult out;
  gpbzip2::bwt_forward(text.data(), int32_t(text.size()), ws, out);
  return {out.last, out.orig_ptr};
}

// bzip2's inverse: n steps along the links from origPtr's, whatever cycles they form.
// Also says whether the links are one cycle (the vector is a BWT).
std::vector<uint8_t> reference_inverse(const std::vector<uint8_t>& last, uint32_t orig_ptr,
                                       bool* one_cycle = nullptr) {
  const size_t n = last.size();
  std::vector<uint32_t> first_row(257, 0), next(n);
  for (uint8_t b : last) first_row[b + 1u]++;
  std::partial_sum(first_row.begin(), first_row.end(), first_row.begin());
  for (uint32_t i = 0; i < n; i++) next[first_row[last[i]]++] = i;
  std::vector<uint8_t> text(n);
  uint32_t row = next[orig_ptr];
  size_t cycle = 0;
  for (size_t k = 0; k < n; k++) {
    text[k] = last[row];
    row = next[row];
    if (cycle == 0 && row == next[orig_ptr]) cycle = k + 1;
  }
  if (one_cycle) *one_cycle = cycle == n;
  return text;
}

std::vector<uint8_t> invert(const Bwt& b) {
  return BlockDecoder::invert_bwt(b.last.data(), uint32_t(b.last.size()), b.orig_ptr);
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> random_bytes(size_t n, int alphabet, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng() % unsigned(alphabet));
  return v;
}

// The text back from its BWT, and the same as the reference inverse gives.
void check_round_trip(const std::vector<uint8_t>& text, const Bwt& b) {
  INFO("n=" << text.size() << " origPtr=" << b.orig_ptr);
  REQUIRE(reference_inverse(b.last, b.orig_ptr) == text);
  REQUIRE(invert(b) == text);
}

}  // namespace

TEST_CASE("inverse BWT of tiny blocks", "[decoder][inverse_bwt]") {
  for (const char* s : {"x", "ab", "ba", "aa", "abc", "banana", "mississippi", "abracadabra"}) {
    const auto text = bytes(s);
    check_round_trip(text, naive_bwt(text));
  }
  // Every block of 1..6 bytes over a two-letter alphabet.
  for (size_t n = 1; n <= 6; n++)
    for (uint32_t bits = 0; bits < (1u << n); bits++) {
      std::string s;
      for (size_t k = 0; k < n; k++) s += bits >> k & 1 ? 'b' : 'a';
      check_round_trip(bytes(s), naive_bwt(bytes(s)));
    }
  for (uint32_t seed = 0; seed < 200; seed++) {
    const auto text = random_bytes(1 + seed % 64, 1 + int(seed % 5), seed);
    check_round_trip(text, naive_bwt(text));
  }
}

TEST_CASE("inverse BWT of blocks of one repeated byte", "[decoder][inverse_bwt]") {
  // All rotations are equal: any origPtr gives the same text.
  for (size_t n : {1, 2, 7, 1000, 1024, 1025, 65536, 900000}) {
    const std::vector<uint8_t> text(n, 0x61);
    for (uint32_t orig_ptr : {uint32_t(0), uint32_t(n / 2), uint32_t(n - 1)})
      check_round_trip(text, {text, orig_ptr});
  }
}

TEST_CASE("inverse BWT of periodic blocks", "[decoder][inverse_bwt]") {
  for (const char* unit : {"ab", "abc", "aab", "abcdefgh"})
    for (size_t n : {2, 3, 9, 100, 1001, 1024, 2048, 4097}) {
      std::vector<uint8_t> text(n);
      const size_t len = std::string(unit).size();
      for (size_t k = 0; k < n; k++) text[k] = uint8_t(unit[k % len]);
      check_round_trip(text, naive_bwt(text));
    }
  // A random stretch repeated, up to the largest block.
  const auto unit = random_bytes(997, 256, 7);
  std::vector<uint8_t> text(900000);
  for (size_t k = 0; k < text.size(); k++) text[k] = unit[k % unit.size()];
  check_round_trip(text, fast_bwt(text));
}

TEST_CASE("inverse BWT of random and generated blocks", "[decoder][inverse_bwt]") {
  // Sizes around the spacing of the chains' start rows and the lanes' chunks.
  for (size_t n : {8, 9, 1023, 1024, 1025, 2047, 2048, 2049, 8191, 8192, 8193, 100000}) {
    for (int alphabet : {2, 4, 256}) {
      const auto text = random_bytes(n, alphabet, uint32_t(n + size_t(alphabet)));
      check_round_trip(text, fast_bwt(text));
    }
  }
  for (const auto& kind : gpbzip2::corpus::kinds()) {
    INFO(kind);
    const auto text = generate(kind, 300000, 3);
    check_round_trip(text, fast_bwt(text));
  }
}

TEST_CASE("inverse BWT of the largest blocks", "[decoder][inverse_bwt]") {
  for (const char* kind : {"text", "random", "binary", "sparse"}) {
    INFO(kind);
    const auto text = generate(kind, size_t(BlockDecoder::kTtWords), 11);
    check_round_trip(text, fast_bwt(text));
  }
}

TEST_CASE("inverse BWT of vectors that are no BWT gives what bzip2 gives", "[decoder][inverse_bwt]") {
  // Their links form several cycles; bzip2 repeats the one through origPtr's next row.
  int several_cycles = 0;
  for (uint32_t seed = 0; seed < 300; seed++) {
    const size_t n = seed < 200 ? 1 + seed : 100000 + seed;
    const auto last = random_bytes(n, 1 + int(seed % 7), seed);
    const uint32_t orig_ptr = uint32_t(std::mt19937(seed)() % n);
    bool one_cycle = false;
    const auto want = reference_inverse(last, orig_ptr, &one_cycle);
    several_cycles += !one_cycle;
    INFO("n=" << n << " origPtr=" << orig_ptr);
    REQUIRE(invert({last, orig_ptr}) == want);
  }
  REQUIRE(several_cycles > 200);
}
