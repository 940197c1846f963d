// Hard inputs for the rotation sort, compared byte for byte with libbzip2: long repeats
// (the fibonacci, thue-morse, repeat and edits kinds) and periodic blocks, whole or cut,
// at the block limits. In a periodic block equal rotations make origPtr depend on the
// order the sort leaves them in, so these pin down bzip2's order as well as speed paths.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compress/block_reader.h"
#include "compress/bwt_periodic.h"
#include "common/format.h"
#include "generators.h"
#include "test_helpers.h"

using gpbzip2::corpus::generate;
using gpbzip2::format::block_limit;

namespace {

// CHECK, so that a test case reports every input that differs, each by its first
// differing byte rather than by two dumps of compressed data.
void check_identical(const std::vector<uint8_t>& in, int level) {
  const auto ours = testing::gp_compress(in, level);
  const auto ref = testing::bzip2_reference(in, level);
  const auto diff = std::mismatch(ours.begin(), ours.end(), ref.begin(), ref.end()).first;
  INFO("sizes " << ours.size() << " and " << ref.size() << " (bzip2), first difference at "
                << diff - ours.begin());
  const bool identical = ours == ref;
  CHECK(identical);
}

// The run-length encoded blocks the compressor sorts.
std::vector<std::vector<uint8_t>> blocks_of(const std::vector<uint8_t>& in, int level) {
  gpbzip2::MemorySource src(in);
  gpbzip2::BlockReader reader(src, level);
  std::vector<std::vector<uint8_t>> out;
  gpbzip2::ByteVector scratch;
  for (gpbzip2::RawBlock b; reader.next(b);) {
    gpbzip2::finish_block(b, scratch);
    const std::span<const uint8_t> text = b.text();
    out.emplace_back(text.begin(), text.end());
  }
  return out;
}

// Whether the block is w^k for some k >= 2 (from the prefix function's last value).
bool is_periodic(const std::vector<uint8_t>& t) {
  const size_t n = t.size();
  std::vector<size_t> pi(n, 0);
  for (size_t i = 1; i < n; i++) {
    size_t k = pi[i - 1];
    while (k > 0 && t[i] != t[k]) k = pi[k - 1];
    pi[i] = k + (t[i] == t[k]);
  }
  const size_t p = n - (n ? pi[n - 1] : 0);
  return p < n && n % p == 0;
}

std::vector<uint8_t> repeated(const std::string& pattern, size_t size) {
  std::vector<uint8_t> v(size);
  for (size_t i = 0; i < size; i++) v[i] = uint8_t(pattern[i % pattern.size()]);
  return v;
}

// How `pattern` repeats in a block: copies go by `unit` input bytes, each `encoded` bytes
// after the first RLE. Copies must not join runs across their seams (the first byte
// differs from the last) unless the pattern is one letter: that is a single run, which the
// RLE writes as four letters and a count every 255 bytes.
struct CopyUnit {
  size_t unit, encoded;
};

CopyUnit copy_unit(const std::string& pattern) {
  const bool one_letter = pattern.find_first_not_of(pattern[0]) == std::string::npos;
  const size_t unit = one_letter ? 255 : pattern.size();
  return {unit, blocks_of(repeated(pattern, unit), 9).at(0).size()};
}

// Random letters from {a,b,c}, no two neighbours equal and the last differing from the
// first, so that copies have no runs and encode as they are.
std::string random_letters(size_t p, std::mt19937& rng) {
  std::string s;
  for (size_t i = 0; i < p; i++) {
    char c;
    do c = char('a' + rng() % 3);
    while ((i > 0 && c == s.back()) || (p > 1 && i == p - 1 && c == s[0]));
    s += c;
  }
  return s;
}

// Patterns of length p (p >= 2): random letters; "abab...c", itself nearly periodic;
// p - 1 a's and a b, whose run the first RLE encodes once it reaches 4.
std::vector<std::string> patterns_of_length(size_t p, std::mt19937& rng) {
  std::string ab;
  for (size_t i = 0; i + 1 < p; i++) ab += "ab"[i % 2];
  return {random_letters(p, rng), ab + 'c', std::string(p - 1, 'a') + 'b'};
}

// One exactly periodic block filling the limit, the same one byte short (a cut
// repetition), and two more copies, so the first block closes at the limit mid-copy and
// a short one follows.
void check_around_limit(const std::string& pattern, int level) {
  INFO("pattern of " << pattern.size() << " bytes \"" << (pattern.size() <= 64 ? pattern : "...")
                     << "\" -" << level);
  const auto [unit, encoded] = copy_unit(pattern);
  const size_t whole = size_t(block_limit(level)) / encoded * unit;
  const auto in = repeated(pattern, whole);
  auto blocks = blocks_of(in, level);
  REQUIRE(blocks.size() == 1);
  REQUIRE(is_periodic(blocks[0]));
  check_identical(in, level);

  const auto cut = repeated(pattern, whole - 1);
  blocks = blocks_of(cut, level);
  REQUIRE(blocks.size() == 1);
  REQUIRE(!is_periodic(blocks[0]));
  check_identical(cut, level);

  const auto over = repeated(pattern, whole + 2 * unit);
  REQUIRE(blocks_of(over, level).size() == 2);
  check_identical(over, level);
}

}  // namespace

TEST_CASE("hard kinds at every level", "[oracle][hard]") {
  // A full block and a short one; repeat's chunk gives about three copies per block.
  for (const char* kind : {"fibonacci", "thue-morse", "repeat", "edits"})
    for (int level = 1; level <= 9; level++) {
      INFO(kind << " -" << level);
      const std::string chunk = std::to_string(30011 * level);
      check_identical(generate(kind, size_t(block_limit(level)) + 1009 * size_t(level),
                               uint64_t(level), kind == std::string("repeat") ? chunk : ""),
                      level);
    }
}

TEST_CASE("periodic blocks of periods 1..64 around the -1 block limit", "[oracle][hard]") {
  std::mt19937 rng(64);
  check_around_limit("a", 1);
  for (size_t p = 2; p <= 64; p++)
    for (const auto& pattern : patterns_of_length(p, rng)) check_around_limit(pattern, 1);
}

TEST_CASE("periodic blocks around the -9 block limit", "[oracle][hard]") {
  std::mt19937 rng(9);
  check_around_limit("a", 9);
  for (size_t p : {2, 3, 5, 64}) check_around_limit(random_letters(p, rng), 9);
  check_around_limit("ababc", 9);
  check_around_limit("aaaaaaab", 9);
}

TEST_CASE("periodic blocks either side of 10000 bytes", "[oracle][hard]") {
  // bzip2 sorts blocks under 10000 bytes with its fallback sort alone; larger ones with its
  // main sort, which gives up for the fallback sort once it has spent its work budget.
  for (const char* pattern : {"ab", "abc", "abcd"})
    for (size_t size : {9996, 9998, 9999, 10000, 10002, 10004}) {
      INFO(pattern << " " << size);
      if (size % std::strlen(pattern) == 0) check_identical(repeated(pattern, size), 1);
    }
  for (size_t p : {3332, 4999}) {
    INFO("period " << p);
    const auto in = generate("repeat", (p < 4999 ? 3 : 2) * p, 4, std::to_string(p));
    REQUIRE(is_periodic(blocks_of(in, 1).at(0)));
    check_identical(in, 1);
  }
}

TEST_CASE("periodic blocks of a few long copies, which bzip2's main sort finishes",
          "[oracle][hard]") {
  // Here bzip2's main sort stays within its budget (bzip2 -vvvv does not report "too
  // repetitive"), so its order of equal rotations, not the fallback sort's, decides
  // origPtr: `cat f f` of a text file is such a block. With many copies, or large blocks
  // of random copies, the main sort gives up; one of each is here as the boundary.
  struct Case {
    const char* kind;
    size_t size, copies;
  };
  for (auto [kind, size, copies] : {Case{"text", 20000, 2}, {"text", 30000, 3}, {"text", 40000, 5},
                                    {"text", 80000, 2}, {"text", 300000, 3}, {"text", 899980, 2},
                                    {"text", 899980, 4}, {"text", 20000, 20}, {"random", 10002, 3},
                                    {"random", 10000, 2}, {"random", 30000, 20},
                                    {"random", 50000, 2}, {"random", 50000, 3}}) {
    INFO(copies << " copies of " << kind << ", " << size << " bytes");
    const size_t p = size / copies;
    const auto chunk = generate(kind, p, 4);
    const auto in = repeated(std::string(chunk.begin(), chunk.end()), p * copies);
    const int level = int(size / 100000) + 1;
    const auto blocks = blocks_of(in, level);
    REQUIRE(blocks.size() == 1);
    REQUIRE(is_periodic(blocks[0]));
    check_identical(in, level);
  }
}

TEST_CASE("long periods made of random chunks", "[oracle][hard]") {
  // Each period at the first level whose block holds two copies, the longer ones at -9
  // too. 450000 never fits twice: at -9 the block is two copies less 19 bytes.
  for (auto [p, level] : {std::pair<size_t, int>{1000, 1}, {4096, 1}, {65536, 2}, {65536, 9},
                          {100000, 3}, {299999, 7}, {299999, 9}}) {
    const auto chunk = generate("repeat", p, 3, std::to_string(p));
    check_around_limit(std::string(chunk.begin(), chunk.end()), level);
  }
  const auto in = generate("repeat", size_t(block_limit(9)) + 5, 3, "450000");
  REQUIRE(blocks_of(in, 9).size() == 2);
  check_identical(in, 9);
}

TEST_CASE("periods that divide the block limit make every full block periodic", "[oracle][hard]") {
  // block_limit(level) = 100000 * level - 19 factors as below (-9's is prime).
  std::mt19937 rng(19);
  for (auto [level, p] : {std::pair{1, 3}, {1, 23}, {1, 69}, {2, 31}, {5, 37}, {6, 29}, {8, 59}}) {
    INFO("period " << p << " -" << level);
    const auto in = repeated(random_letters(size_t(p), rng), 2 * size_t(block_limit(level)) + 3);
    const auto blocks = blocks_of(in, level);
    REQUIRE(blocks.size() == 3);
    REQUIRE(is_periodic(blocks[0]));
    REQUIRE(is_periodic(blocks[1]));
    check_identical(in, level);
  }
}

TEST_CASE("periodic blocks whose first byte fills most of the period", "[oracle][hard]") {
  // bzip2's fallback order is followed on the bucket of the block's first byte, which the
  // sort array's spare room does not hold here: short periods (4-byte items) and long
  // ones (8-byte items), a few copies each.
  for (size_t aab : {size_t(1000), size_t(1500)})
    for (size_t copies : {2, 3}) {
      std::string u;
      for (size_t i = 0; i < aab; i++) u += "aab";
      u += "ac";
      INFO(copies << " copies of " << u.size() << " bytes");
      const auto in = repeated(u, u.size() * copies);
      REQUIRE(is_periodic(blocks_of(in, 1).at(0)));
      check_identical(in, 1);
    }
}

TEST_CASE("random periodic blocks of many periods and sizes", "[oracle][hard]") {
  // Random words, letters with a few rare bytes (which keep bzip2's main sort within its
  // budget: its first big bucket is small), and chunks repeated with edits inside the
  // period; 2 to 6 copies mostly, some many. No byte equals the one before it, across the
  // seams too, so the first RLE leaves the block as it is: periodic. Some of these bzip2's
  // main sort finishes, some it gives up on; both are counted.
  std::mt19937 rng(2026);
  int finished = 0, gave_up = 0;
  for (int c = 0; c < 48; c++) {
    const int kind = c % 3;
    const size_t copies = c % 8 == 7 ? 8 + rng() % 33 : 2 + rng() % 5;
    const size_t size = c % 16 == 5 ? 899980 - rng() % 1000 : 10000 + rng() % 390000;
    const size_t p = std::max<size_t>(size / copies, 2);
    std::vector<uint8_t> v(p);
    if (kind == 0) {
      std::vector<std::string> words;
      for (int w = 0; w < 60; w++) {
        std::string s(1 + rng() % 9, ' ');
        for (char& ch : s) ch = char('a' + rng() % 26);
        words.push_back(s);
      }
      std::string s;
      while (s.size() < p) s += words[rng() % words.size()] + (rng() % 9 ? " " : ".\n");
      std::copy_n(s.begin(), p, v.begin());
    } else if (kind == 1) {
      const unsigned alphabet = std::vector<unsigned>{3, 4, 26, 200}[rng() % 4];
      for (auto& b : v) b = uint8_t('A' + rng() % alphabet);
    } else {
      const size_t chunk = 1 + rng() % 700;
      for (size_t i = 0; i < p; i++) v[i] = i < chunk ? uint8_t('a' + rng() % 20) : v[i - chunk];
      for (int e = 0; e < 6; e++) v[rng() % p] ^= 0x20;
    }
    if (rng() % 4 != 0)
      for (int r = 1 + int(rng() % 6); r > 0; r--) v[rng() % p] = uint8_t(1 + rng() % 4);
    for (size_t i = 1; i <= p; i++)
      if (v[i % p] == v[i - 1]) v[i % p] = uint8_t(v[i % p] + 7 + (v[(i + 1) % p] == uint8_t(v[i % p] + 7)));
    if (v[0] == v[p - 1] || v[0] == v[1 % p]) continue;
    std::vector<uint8_t> in;
    for (size_t k = 0; k < copies; k++) in.insert(in.end(), v.begin(), v.end());
    const int level = int(in.size() / 100000) + 1;
    if (level > 9 || in.size() > size_t(block_limit(level))) continue;
    INFO("case " << c << ": " << copies << " copies of " << p << " bytes, kind " << kind);
    const auto blocks = blocks_of(in, level);
    REQUIRE(blocks.size() == 1);
    REQUIRE(blocks[0] == in);
    std::vector<uint8_t> tt(in);
    tt.insert(tt.end(), in.begin(), in.end());
    std::vector<int32_t> order(in.size());
    const int32_t n = int32_t(in.size());
    (gpbzip2::bzip2_main_sort_may_finish(in.data(), n, int32_t(p)) &&
             gpbzip2::bzip2_main_sort(tt.data(), n, int32_t(p), order.data())
         ? finished
         : gave_up)++;
    check_identical(in, level);
  }
  INFO(finished << " finished, " << gave_up << " gave up");
  CHECK(finished >= 5);
  CHECK(gave_up >= 5);
}
