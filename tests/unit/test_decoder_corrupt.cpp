// Damaged input: flipped bits and truncation at many places. Never a crash, never a
// wrong byte (what was written before the error is a prefix of the true output), and
// always an Error unless the damage hit only padding.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "generators.h"
#include "test_helpers.h"

namespace {

struct Result {
  bool ok = false;
  gpbzip2::ErrorKind kind = gpbzip2::ErrorKind::Internal;
  std::vector<uint8_t> out;
};

Result decode(const std::vector<uint8_t>& bz, int threads, bool test_only = false) {
  auto r = testing::gp_decompress(bz, threads, test_only);
  return {!r.error, r.error ? r.error->kind() : gpbzip2::ErrorKind::Internal, std::move(r.out)};
}

bool is_prefix(const std::vector<uint8_t>& part, const std::vector<uint8_t>& whole) {
  return part.size() <= whole.size() && std::equal(part.begin(), part.end(), whole.begin());
}

// Two streams of several blocks each, of different levels.
std::vector<uint8_t> original() {
  auto in = gpbzip2::corpus::generate("text", 150000, 21);
  const auto more = gpbzip2::corpus::generate("runs", 60000, 22);
  in.insert(in.end(), more.begin(), more.end());
  return in;
}

std::vector<uint8_t> compressed(const std::vector<uint8_t>& in) {
  const size_t half = 110000;
  auto bz = testing::bzip2_reference({in.begin(), in.begin() + half}, 1);
  const auto second = testing::bzip2_reference({in.begin() + half, in.end()}, 2);
  bz.insert(bz.end(), second.begin(), second.end());
  return bz;
}

}  // namespace

TEST_CASE("flipped bits give an error or the right output, never wrong bytes",
          "[decoder][corrupt]") {
  const auto in = original();
  const auto bz = compressed(in);
  const uint64_t bits = uint64_t(bz.size()) * 8;
  std::mt19937_64 rng(99);
  int errors = 0;
  for (int i = 0; i < 300; i++) {
    // Spread over the file, with the headers (first 200 bits of each block) over-sampled.
    const uint64_t bit = i < 100 ? uint64_t(i) * 3 : rng() % bits;
    auto bad = bz;
    bad[bit / 8] ^= uint8_t(0x80 >> (bit % 8));
    const Result r = decode(bad, 1 + i % 2);
    INFO("bit " << bit);
    REQUIRE(is_prefix(r.out, in));
    if (r.ok) {
      REQUIRE(r.out == in);
    } else {
      errors++;
      REQUIRE((r.kind == gpbzip2::ErrorKind::Corrupt || r.kind == gpbzip2::ErrorKind::Truncated ||
               r.kind == gpbzip2::ErrorKind::NotBzip2));
      REQUIRE(decode(bad, 2, true).ok == false);
    }
  }
  REQUIRE(errors > 280);  // only flips in the final padding can go unnoticed
}

TEST_CASE("damaged byte runs give an error, never wrong bytes", "[decoder][corrupt]") {
  const auto in = original();
  const auto bz = compressed(in);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 60; i++) {
    auto bad = bz;
    const size_t at = 4 + rng() % (bz.size() - 20), len = 1 + rng() % 16;
    for (size_t k = 0; k < len; k++) bad[at + k] = uint8_t(rng());
    const Result r = decode(bad, 2);
    INFO("bytes " << at << ".." << at + len);
    REQUIRE(is_prefix(r.out, in));
    if (r.ok) REQUIRE(r.out == in);
  }
}

TEST_CASE("truncated input is reported as truncated", "[decoder][corrupt]") {
  const auto in = original();
  const auto bz = compressed(in);
  std::vector<size_t> cuts;
  for (size_t n = 1; n < 64; n++) cuts.push_back(n);  // 0: see test_decoder.cpp
  for (size_t n = bz.size() - 64; n < bz.size(); n++) cuts.push_back(n);
  for (size_t n = 64; n < bz.size() - 64; n += bz.size() / 150) cuts.push_back(n);
  for (size_t n : cuts) {
    const std::vector<uint8_t> cut(bz.begin(), bz.begin() + ptrdiff_t(n));
    const Result r = decode(cut, 1 + int(n % 2));
    INFO("cut at " << n << " of " << bz.size());
    REQUIRE_FALSE(r.ok);
    REQUIRE(r.kind == gpbzip2::ErrorKind::Truncated);
    REQUIRE(is_prefix(r.out, in));
  }
}
