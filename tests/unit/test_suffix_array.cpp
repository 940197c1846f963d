// The induced suffix sort against libdivsufsort (the same suffix array for any text), on
// the kinds that take its three ways to order repeated LMS substrings: none repeat, few
// (prefix doubling on their names), many (recursion), and doubling that gives up.
#include <catch2/catch.hpp>

#include <divsufsort.h>

#include <algorithm>
#include <bit>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compress/suffix_array.h"

namespace {

void require_same_as_divsufsort(const std::vector<uint8_t>& t,
                                gpbzip2::SuffixArrayWorkspace& ws) {
  const int32_t n = int32_t(t.size());
  std::vector<int32_t> want(t.size()), got(t.size());
  REQUIRE(divsufsort(t.data(), want.data(), n) == 0);
  gpbzip2::suffix_array(t.data(), n, got.data(), ws);
  REQUIRE(got == want);
}

std::vector<uint8_t> make(int kind, size_t n, std::mt19937& rng) {
  std::vector<uint8_t> t(n);
  const unsigned alphabet = 1 + rng() % (rng() % 2 ? 4 : 256);
  auto random_chunk = [&](size_t len) {
    std::vector<uint8_t> u(len);
    for (auto& c : u) c = uint8_t(rng() % alphabet);
    return u;
  };
  switch (kind) {
    case 0:  // random over a small or large alphabet
      t = random_chunk(n);
      break;
    case 1: {  // a random pattern repeated
      const auto u = random_chunk(1 + rng() % 50);
      for (size_t i = 0; i < n; i++) t[i] = u[i % u.size()];
      break;
    }
    case 2: {  // the Fibonacci word
      std::string a = "a", b = "ab";
      while (b.size() < n) a = std::exchange(b, b + a);
      std::copy(b.begin(), b.begin() + long(n), t.begin());
      break;
    }
    case 3:  // the Thue-Morse word
      for (size_t i = 0; i < n; i++) t[i] = uint8_t('a' + (std::popcount(i) & 1));
      break;
    case 4:  // runs
      for (size_t i = 0; i < n;) {
        const uint8_t c = uint8_t(rng() % alphabet);
        for (size_t len = 1 + rng() % 20; len > 0 && i < n; len--) t[i++] = c;
      }
      break;
    case 5: {  // a longer chunk repeated, a few bytes changed
      const auto u = random_chunk(1 + rng() % 2000);
      for (size_t i = 0; i < n; i++) t[i] = u[i % u.size()];
      for (int e = 0; e < 4; e++) t[rng() % n] = uint8_t(rng());
      break;
    }
    case 6:  // random bytes, then "ab" repeated
      for (size_t i = 0; i < n; i++) t[i] = i < n / 2 ? uint8_t(rng()) : uint8_t("ab"[i % 2]);
      break;
    default: {  // random bytes, then a random chunk twice: doubling on names runs long
      for (size_t i = 0; i < n / 2; i++) t[i] = uint8_t(rng());
      for (size_t i = n / 2; i < n; i++) t[i] = i < n / 2 + n / 4 ? uint8_t(rng()) : t[i - n / 4];
      break;
    }
  }
  return t;
}

}  // namespace

TEST_CASE("suffix array: every kind at small sizes, against libdivsufsort", "[bwt]") {
  std::mt19937 rng(29);
  gpbzip2::SuffixArrayWorkspace ws;  // reused, as a station reuses it
  for (size_t n : {1, 2, 3, 4, 5, 7, 8, 16, 31, 100, 1000, 4099})
    for (int kind = 0; kind <= 7; kind++)
      for (int rep = 0; rep < 8; rep++) require_same_as_divsufsort(make(kind, n, rng), ws);
}

TEST_CASE("suffix array: every kind at block sizes, against libdivsufsort", "[bwt]") {
  std::mt19937 rng(2029);
  gpbzip2::SuffixArrayWorkspace ws;
  for (size_t n : {65536, 299999, 900000})
    for (int kind = 0; kind <= 7; kind++) require_same_as_divsufsort(make(kind, n, rng), ws);
}
