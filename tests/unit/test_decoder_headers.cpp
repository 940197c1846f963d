// Hand-built blocks whose fields can lie, checked against libbzip2: the decoder accepts
// what libbzip2 accepts, with the same output, and rejects the rest without undefined
// behaviour. Also bzip2 0.9.0's randomised blocks and false block magics.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>

#include "common/bit_writer.h"
#include "decompress/block_scanner.h"
#include "common/crc32.h"
#include "common/rand_table.h"
#include "common/format.h"
#include "test_helpers.h"

namespace {

// Every field of one block as it goes into the stream, before any is checked.
struct Block {
  uint32_t crc = 0;
  bool randomised = false;
  uint32_t orig_ptr = 0;
  std::vector<uint8_t> used;                 // byte values in use, ascending
  int groups = 2;                            // as written in 3 bits
  std::vector<int> selector_mtf;             // coded selectors
  std::vector<std::vector<int>> lengths;     // per table, one per symbol
  std::vector<int> symbols;                  // MTF/RUNA/RUNB symbols, EOB last
  std::vector<std::vector<int>> coded_with;  // lengths the symbols are coded with, if not those
};

// The initial run-length coding undone: 4 equal bytes, then a count of further copies.
std::vector<uint8_t> expand_runs(const std::vector<uint8_t>& text) {
  std::vector<uint8_t> out;
  int run = 0;
  for (size_t i = 0; i < text.size(); i++) {
    if (run == 4) {
      out.insert(out.end(), text[i], out.back());
      run = 0;
      continue;
    }
    run = !out.empty() && run > 0 && text[i] == out.back() ? run + 1 : 1;
    out.push_back(text[i]);
  }
  return out;
}

// bzip2 0.9.0's randomisation: flips the low bit at running sums of the table, less 2.
std::vector<uint8_t> randomise(std::vector<uint8_t> text) {
  size_t at = 0;
  for (size_t r = 0;; r++) {
    at += gpbzip2::kRandomiseTable[r % 512];
    if (at - 2 >= text.size()) return text;
    text[at - 2] ^= 1;
  }
}

// Sorted rotations, naively: last column and the row of the text itself.
std::vector<uint8_t> bwt(const std::vector<uint8_t>& text, uint32_t& orig_ptr) {
  const size_t n = text.size();
  std::vector<uint32_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0u);
  std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    for (size_t k = 0; k < n; k++) {
      const uint8_t x = text[(a + k) % n], y = text[(b + k) % n];
      if (x != y) return x < y;
    }
    return false;
  });
  std::vector<uint8_t> last(n);
  for (size_t i = 0; i < n; i++) {
    last[i] = text[(rows[i] + n - 1) % n];
    if (rows[i] == 0) orig_ptr = uint32_t(i);
  }
  return last;
}

// A valid block for the BWT column `last` (text rows as given) whose output is `out`.
Block make_block(const std::vector<uint8_t>& last, uint32_t orig_ptr,
                 const std::vector<uint8_t>& out) {
  Block b;
  b.orig_ptr = orig_ptr;
  b.crc = ~gpbzip2::crc32_update(~0u, out.data(), out.size());
  bool in_use[256] = {};
  for (uint8_t c : last) in_use[c] = true;
  for (int c = 0; c < 256; c++)
    if (in_use[c]) b.used.push_back(uint8_t(c));
  std::vector<uint8_t> mtf = b.used;
  uint32_t zeros = 0;
  auto flush = [&] {
    // Bijective base 2, least significant digit first: RUNA = 1, RUNB = 2.
    for (; zeros > 0; zeros = (zeros - 1) / 2) b.symbols.push_back(int((zeros - 1) & 1));
  };
  for (uint8_t c : last) {
    const auto it = std::find(mtf.begin(), mtf.end(), c);
    const int idx = int(it - mtf.begin());
    std::rotate(mtf.begin(), it, it + 1);
    if (idx == 0) {
      zeros++;
      continue;
    }
    flush();
    b.symbols.push_back(idx + 1);
  }
  flush();
  const int alpha = int(b.used.size()) + 2;
  b.symbols.push_back(alpha - 1);
  // A complete code: the shortest lengths that fit, the first symbols one bit shorter.
  int k = 1;
  while ((1 << k) < alpha) k++;
  const int shorter = (1 << k) - alpha;
  std::vector<int> len(size_t(alpha), k);
  for (int s = 0; s < shorter; s++) len[size_t(s)] = k - 1;
  b.lengths.assign(2, len);
  b.selector_mtf.assign((b.symbols.size() + 49) / 50, 0);
  return b;
}

// Canonical codes in order of (length, symbol), as bzip2 assigns them.
std::vector<uint32_t> codes_for(const std::vector<int>& len) {
  std::vector<uint32_t> code(len.size());
  uint32_t next = 0;
  for (int l = 1; l <= 32; l++) {
    for (size_t s = 0; s < len.size(); s++)
      if (len[s] == l) code[s] = next++;
    next <<= 1;
  }
  return code;
}

std::vector<uint8_t> write_stream(const Block& b, int level) {
  gpbzip2::BitWriter w;
  w.put(8, 'B'), w.put(8, 'Z'), w.put(8, 'h'), w.put(8, uint32_t('0' + level));
  w.put48(gpbzip2::format::kBlockMagic);
  w.put(32, b.crc);
  w.put(1, b.randomised);
  w.put(24, b.orig_ptr);
  uint32_t ranges = 0, bits[16] = {};
  for (uint8_t c : b.used) {
    ranges |= 0x8000u >> (c / 16);
    bits[c / 16] |= 0x8000u >> (c % 16);
  }
  w.put(16, ranges);
  for (int r = 0; r < 16; r++)
    if (ranges & (0x8000u >> r)) w.put(16, bits[r]);
  w.put(3, uint32_t(b.groups));
  w.put(15, uint32_t(b.selector_mtf.size()));
  std::vector<int> group_mtf(std::max<size_t>(b.lengths.size(), 1));
  std::iota(group_mtf.begin(), group_mtf.end(), 0);
  std::vector<int> selectors;
  for (int j : b.selector_mtf) {
    for (int i = 0; i < j; i++) w.put(1, 1);
    w.put(1, 0);
    if (j < int(group_mtf.size())) {
      std::rotate(group_mtf.begin(), group_mtf.begin() + j, group_mtf.begin() + j + 1);
      selectors.push_back(group_mtf[0]);
    }
  }
  for (const auto& len : b.lengths) {
    int cur = len[0];
    w.put(5, uint32_t(cur));
    for (int l : len) {
      for (; cur < l; cur++) w.put(2, 2);
      for (; cur > l; cur--) w.put(2, 3);
      w.put(1, 0);
    }
  }
  const auto& coding = b.coded_with.empty() ? b.lengths : b.coded_with;
  std::vector<std::vector<uint32_t>> codes;
  for (const auto& len : coding) codes.push_back(codes_for(len));
  for (size_t i = 0; i < b.symbols.size(); i++) {
    const size_t g = i / 50 < selectors.size() ? size_t(selectors[i / 50]) : 0;
    const int s = b.symbols[i];
    const int l = std::clamp(coding[g][size_t(s)], 1, 20);
    w.put(l, codes[g][size_t(s)]);
  }
  w.put48(gpbzip2::format::kEndMagic);
  w.put(32, gpbzip2::combine_stream_crc(0, b.crc));
  return w.finish();
}

struct Outcome {
  bool ok;
  std::vector<uint8_t> out;
};

Outcome ours(const std::vector<uint8_t>& bz, int threads) {
  auto r = testing::gp_decompress(bz, threads);
  if (!r.error) return {true, std::move(r.out)};
  INFO(r.error->what());
  CHECK((r.error->kind() == gpbzip2::ErrorKind::Corrupt || r.error->kind() == gpbzip2::ErrorKind::Truncated));
  return {false, {}};
}

Outcome libbzip2(const std::vector<uint8_t>& bz) {
  try {
    return {true, testing::bzip2_decompress(bz, 64u << 20)};
  } catch (const std::runtime_error&) {
    return {false, {}};
  }
}

void same_as_libbzip2(const std::vector<uint8_t>& bz) {
  const Outcome ref = libbzip2(bz);
  for (int threads : {1, 2}) {
    const Outcome got = ours(bz, threads);
    REQUIRE(got.ok == ref.ok);
    REQUIRE(got.out == ref.out);
  }
}

std::vector<uint8_t> sample_text(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> t(n);
  for (auto& c : t) c = uint8_t('a' + rng() % 7);
  return t;
}

}  // namespace

extern "C" int BZ2_rNums[512];

TEST_CASE("the randomisation table is libbzip2's", "[decoder][headers]") {
  for (size_t i = 0; i < 512; i++) REQUIRE(int(gpbzip2::kRandomiseTable[i]) == BZ2_rNums[i]);
}

TEST_CASE("hand-built blocks decode as libbzip2 decodes them", "[decoder][headers]") {
  const auto text = sample_text(2000, 1);
  uint32_t orig = 0;
  const auto last = bwt(text, orig);
  const Block good = make_block(last, orig, expand_runs(text));
  REQUIRE(libbzip2(write_stream(good, 1)).out == expand_runs(text));
  REQUIRE(ours(write_stream(good, 1), 2).out == expand_runs(text));
  const int alpha = int(good.used.size()) + 2;

  SECTION("number of tables") {
    for (int groups : {0, 1, 7}) {
      Block b = good;
      b.groups = groups;
      same_as_libbzip2(write_stream(b, 1));
    }
  }
  SECTION("number of selectors: too few, none, and more than 18002") {
    // bzip2 1.0.8 reads all of them and keeps the first 18002.
    REQUIRE(std::string(BZ2_bzlibVersion()).rfind("1.0.8", 0) == 0);
    for (size_t n :
         {size_t(0), good.selector_mtf.size() - 1, size_t(18002), size_t(18003), size_t(32767)}) {
      INFO(n);
      Block b = good;
      b.selector_mtf.resize(n, 1);
      same_as_libbzip2(write_stream(b, 1));
    }
  }
  SECTION("selector beyond the tables") {
    Block b = good;
    b.selector_mtf.back() = 2;
    same_as_libbzip2(write_stream(b, 1));
  }
  SECTION("code lengths outside 1..20") {
    for (int bad : {0, 21}) {
      Block b = good;
      b.lengths[1][size_t(alpha - 1)] = bad;
      same_as_libbzip2(write_stream(b, 1));
      b = good;
      b.lengths[0][0] = bad;
      same_as_libbzip2(write_stream(b, 1));
    }
  }
  SECTION("oversubscribed table") {
    Block b = good;
    b.lengths[1].assign(size_t(alpha), 1);
    REQUIRE_FALSE(ours(write_stream(b, 1), 1).ok);
  }
  SECTION("incomplete tables are used as bzip2 uses them") {
    Block b = good;
    b.lengths[0].assign(size_t(alpha), 20);  // used, every code valid
    b.lengths[1].assign(size_t(alpha), 9);   // unused
    same_as_libbzip2(write_stream(b, 1));
    REQUIRE(ours(write_stream(b, 1), 1).out == expand_runs(text));
    // A code an incomplete table leaves unused is an error.
    b = good;
    b.coded_with = b.lengths;
    b.lengths[0].assign(size_t(alpha), 6);
    same_as_libbzip2(write_stream(b, 1));
    REQUIRE_FALSE(ours(write_stream(b, 1), 1).ok);
  }
  SECTION("origPtr") {
    for (uint32_t p : {uint32_t(text.size()), uint32_t(0xffffff), uint32_t(text.size() - 1)}) {
      Block b = good;
      b.orig_ptr = p;
      same_as_libbzip2(write_stream(b, 1));
    }
  }
  SECTION("no bytes in use") {
    Block b = good;
    b.used.clear();
    b.symbols = {1};
    b.lengths.assign(2, {1, 1});
    b.selector_mtf = {0};
    same_as_libbzip2(write_stream(b, 1));
  }
  SECTION("stored CRC") {
    Block b = good;
    b.crc ^= 1;
    same_as_libbzip2(write_stream(b, 1));
  }
}

TEST_CASE("runs that overflow the block size are rejected as bzip2 rejects them",
          "[decoder][headers]") {
  for (uint32_t n : {100000u, 100001u, 2097151u}) {
    const std::vector<uint8_t> text(n, 'a');
    for (int level : {1, 2}) {
      INFO(n << " at level " << level);
      same_as_libbzip2(write_stream(make_block(text, 0, expand_runs(text)), level));
    }
  }
}

TEST_CASE("randomised blocks of bzip2 0.9.0", "[decoder][headers]") {
  for (size_t n : {size_t(600), size_t(5000)}) {
    std::vector<uint8_t> text = sample_text(n, 7);
    text.insert(text.begin() + 100, 4, 'q');  // a run: its count byte is randomised too
    text[104] = 3;
    uint32_t orig = 0;
    const auto last = bwt(randomise(text), orig);
    Block b = make_block(last, orig, expand_runs(text));
    b.randomised = true;
    const auto bz = write_stream(b, 1);
    REQUIRE(libbzip2(bz).out == expand_runs(text));
    same_as_libbzip2(bz);
  }
}

TEST_CASE("block magics inside blocks are not trusted", "[decoder][headers]") {
  // Blocks using exactly these bytes start their symbol map with the block magic's (or
  // the end-of-stream magic's) 48 bits, so every block holds a false candidate.
  const std::vector<std::vector<uint8_t>> alphabets = {
      {0x21, 0x23, 0x24, 0x27, 0x2a, 0x2d, 0x2e, 0x31, 0x33, 0x36, 0x37, 0x39, 0x3b, 0x3c, 0x3f,
       0x70, 0x90, 0xf0},
      {0x31, 0x35, 0x37, 0x3a, 0x3b, 0x3c, 0x51, 0x53, 0x58, 0x5b, 0x60, 0x70, 0x90, 0xa0, 0xb0,
       0xe0}};
  for (const auto& alphabet : alphabets) {
    std::mt19937 rng(5);
    // No byte repeats the one before: runs would add their count bytes to the block.
    std::vector<uint8_t> in(450000);
    size_t prev = 0;
    for (auto& c : in) {
      prev = (prev + 1 + rng() % (alphabet.size() - 1)) % alphabet.size();
      c = alphabet[prev];
    }
    const auto bz = testing::bzip2_reference(in, 1);
    std::vector<gpbzip2::MagicHit> hits;
    gpbzip2::scan_for_magic(bz.data(), bz.size(), 0, bz.size(), hits);
    const size_t blocks = (in.size() + 99980) / 99981;
    REQUIRE(hits.size() == 2 * blocks + 1);
    for (int threads : {1, 2, 4}) REQUIRE(ours(bz, threads).out == in);
  }
}
