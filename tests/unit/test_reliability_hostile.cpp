// Hostile .bz2 input: streams built field by field with a small encoder written here, so
// each test breaks exactly one rule of the format and asserts the exact error kind. The
// same streams go to libbzip2, which must agree wherever bzip2 1.0.8 defines the outcome.
#include <bzlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <optional>

#include "common/bit_writer.h"
#include "common/rand_table.h"
#include "common/format.h"
#include "gpbzip2.h"
#include "test_helpers.h"

namespace {

using Bytes = std::vector<uint8_t>;
using gpbzip2::ErrorKind;

uint32_t crc_update(uint32_t crc, const Bytes& data) {
  for (uint8_t b : data) {
    crc ^= uint32_t(b) << 24;
    for (int k = 0; k < 8; k++) crc = (crc & 0x80000000u) ? (crc << 1) ^ 0x04c11db7u : crc << 1;
  }
  return crc;
}
uint32_t block_crc(const Bytes& data) { return ~crc_update(0xffffffffu, data); }

// bzip2's first run-length stage, for one block.
Bytes rle1(const Bytes& in) {
  Bytes out;
  for (size_t i = 0; i < in.size();) {
    size_t len = 1;
    while (i + len < in.size() && in[i + len] == in[i] && len < 255) len++;
    out.insert(out.end(), std::min<size_t>(len, 4), in[i]);
    if (len >= 4) out.push_back(uint8_t(len - 4));
    i += len;
  }
  return out;
}

// Its inverse, as the decoder applies it: after four equal bytes the next is a count.
Bytes unrle1(const Bytes& in) {
  Bytes out;
  int run = 0;
  for (size_t i = 0; i < in.size(); i++) {
    if (run == 4) {
      out.insert(out.end(), in[i], in[i - 1]);
      run = 0;
      continue;
    }
    run = (i > 0 && in[i] == in[i - 1] && run > 0) ? run + 1 : 1;
    out.push_back(in[i]);
  }
  return out;
}

// One block as written: every field is set directly, so a test can break any of them.
struct Block {
  uint64_t magic = gpbzip2::format::kBlockMagic;
  uint32_t crc = 0;
  bool randomised = false;
  uint32_t orig_ptr = 0;
  std::array<bool, 256> used{};
  uint32_t n_groups = 2;
  std::optional<uint32_t> n_selectors;  // the count written, if not selectors.size()
  std::vector<uint32_t> selectors;      // MTF-coded, as written
  std::vector<std::vector<int>> lengths;
  std::vector<int> symbols;             // RUNA/RUNB, MTF values + 1, EOB last
  // Where to write, instead of that symbol, the first unused code word of an incomplete
  // table 0 (of its longest length).
  std::optional<size_t> unused_code_at;

  int alpha_size() const { return int(std::count(used.begin(), used.end(), true)) + 2; }
};

// Code lengths of a complete prefix code over n symbols (Kraft sum exactly 1).
std::vector<int> complete_lengths(int n) {
  int k = 1;
  while ((1 << k) < n) k++;
  const int shorter = (1 << k) - n;
  std::vector<int> len(size_t(n), k);
  std::fill(len.begin(), len.begin() + shorter, k - 1);
  return len;
}

// A valid block holding `data` (a whole block's original bytes), with a naive BWT.
Block make_block(const Bytes& data, bool randomised = false) {
  Block b;
  Bytes v = rle1(data);
  b.crc = block_crc(data);
  b.randomised = randomised;
  if (randomised) {
    // The decoder flips the low bit where bzip2 0.9.0's counter runs out; flip first.
    int to_go = 0, t = 0;
    for (auto& byte : v) {
      if (to_go == 0) {
        to_go = gpbzip2::kRandomiseTable[size_t(t)];
        t = (t + 1) % 512;
      }
      to_go--;
      if (to_go == 1) byte ^= 1;
    }
  }
  const size_t n = v.size();
  std::vector<size_t> rot(n);
  std::iota(rot.begin(), rot.end(), 0);
  std::stable_sort(rot.begin(), rot.end(), [&](size_t x, size_t y) {
    for (size_t k = 0; k < n; k++) {
      uint8_t cx = v[(x + k) % n], cy = v[(y + k) % n];
      if (cx != cy) return cx < cy;
    }
    return false;
  });
  Bytes last(n);
  for (size_t i = 0; i < n; i++) {
    last[i] = v[(rot[i] + n - 1) % n];
    if (rot[i] == 0) b.orig_ptr = uint32_t(i);
  }
  for (uint8_t c : v) b.used[c] = true;
  Bytes order;
  for (int c = 0; c < 256; c++)
    if (b.used[size_t(c)]) order.push_back(uint8_t(c));
  const int eob = int(order.size()) + 1;
  uint64_t zeros = 0;
  auto flush_zeros = [&] {
    // Bijective base 2: RUNA is digit 1, RUNB digit 2, least significant first.
    for (; zeros > 0; zeros = (zeros - 1) / 2) b.symbols.push_back(int((zeros - 1) % 2));
  };
  for (uint8_t c : last) {
    size_t j = size_t(std::find(order.begin(), order.end(), c) - order.begin());
    if (j == 0) {
      zeros++;
      continue;
    }
    flush_zeros();
    order.erase(order.begin() + long(j));
    order.insert(order.begin(), c);
    b.symbols.push_back(int(j) + 1);
  }
  flush_zeros();
  b.symbols.push_back(eob);
  b.lengths.assign(2, complete_lengths(b.alpha_size()));
  b.selectors.assign((b.symbols.size() + 49) / 50, 0);
  return b;
}

void write_block(gpbzip2::BitWriter& w, const Block& b) {
  w.put48(b.magic);
  w.put(32, b.crc);
  w.put(1, b.randomised);
  w.put(24, b.orig_ptr);
  uint32_t ranges = 0;
  for (int r = 0; r < 16; r++)
    for (int k = 0; k < 16; k++)
      if (b.used[size_t(r * 16 + k)]) ranges |= 0x8000u >> r;
  w.put(16, ranges);
  for (int r = 0; r < 16; r++) {
    if (!(ranges & (0x8000u >> r))) continue;
    uint32_t bits = 0;
    for (int k = 0; k < 16; k++)
      if (b.used[size_t(r * 16 + k)]) bits |= 0x8000u >> k;
    w.put(16, bits);
  }
  w.put(3, b.n_groups);
  w.put(15, b.n_selectors.value_or(uint32_t(b.selectors.size())));
  for (uint32_t s : b.selectors) {
    for (uint32_t k = 0; k < s; k++) w.put(1, 1);
    w.put(1, 0);
  }
  for (const auto& table : b.lengths) {
    int cur = table.empty() ? 1 : table[0];
    w.put(5, uint32_t(cur));
    for (int len : table) {
      for (; cur < len; cur++) w.put(2, 2);
      for (; cur > len; cur--) w.put(2, 3);
      w.put(1, 0);
    }
  }
  if (b.lengths.empty()) return;
  // Canonical codes as bzip2 assigns them: by length, then by symbol.
  std::vector<std::vector<uint32_t>> codes;
  const int longest = *std::max_element(b.lengths[0].begin(), b.lengths[0].end());
  uint32_t first_unused = 0;
  for (const auto& table : b.lengths) {
    std::vector<uint32_t> code(table.size());
    uint32_t next = 0;
    for (int len = 1; len <= 32; len++) {
      for (size_t s = 0; s < table.size(); s++)
        if (table[s] == len) code[s] = next++;
      if (codes.empty() && len == longest) first_unused = next;
      next <<= 1;
    }
    codes.push_back(code);
  }
  // Undo the selectors' MTF to know which table codes each group of 50 symbols.
  std::vector<uint32_t> mtf(b.n_groups);
  std::iota(mtf.begin(), mtf.end(), 0u);
  std::vector<uint32_t> tables;
  for (uint32_t s : b.selectors) {
    uint32_t t = s < mtf.size() ? mtf[s] : 0;
    if (s < mtf.size()) {
      mtf.erase(mtf.begin() + s);
      mtf.insert(mtf.begin(), t);
    }
    tables.push_back(t < b.lengths.size() ? t : 0);
  }
  for (size_t i = 0; i < b.symbols.size(); i++) {
    size_t t = i / 50 < tables.size() ? tables[i / 50] : 0;
    if (i == b.unused_code_at) {
      REQUIRE(tables[i / 50] == 0);
      w.put(longest, first_unused);
      continue;
    }
    size_t sym = size_t(b.symbols[i]);
    if (sym >= b.lengths[t].size()) sym = 0;
    w.put(b.lengths[t][sym], codes[t][sym]);
  }
}

struct StreamSpec {
  char level = '9';
  std::optional<uint32_t> combined_crc;  // if not the one the blocks give
  bool end_marker = true;
};

Bytes make_stream(const std::vector<Block>& blocks, const StreamSpec& spec = {}) {
  gpbzip2::BitWriter w;
  w.put(8, 'B');
  w.put(8, 'Z');
  w.put(8, 'h');
  w.put(8, uint8_t(spec.level));
  uint32_t combined = 0;
  for (const auto& b : blocks) {
    write_block(w, b);
    combined = ((combined << 1) | (combined >> 31)) ^ b.crc;
  }
  if (spec.end_marker) {
    w.put48(gpbzip2::format::kEndMagic);
    w.put(32, spec.combined_crc.value_or(combined));
  }
  return w.finish();
}

// What libbzip2 makes of one stream: its output, or nullopt on any error.
std::optional<Bytes> libbzip2_decode(const Bytes& in) {
  bz_stream s{};
  REQUIRE(BZ2_bzDecompressInit(&s, 0, 0) == BZ_OK);
  s.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
  s.avail_in = unsigned(in.size());
  Bytes out;
  int rc;
  do {
    uint8_t buf[65536];
    s.next_out = reinterpret_cast<char*>(buf);
    s.avail_out = sizeof buf;
    rc = BZ2_bzDecompress(&s);
    out.insert(out.end(), buf, buf + (sizeof buf - s.avail_out));
    if (rc == BZ_OK && s.avail_in == 0 && s.avail_out > 0) rc = BZ_UNEXPECTED_EOF;
  } while (rc == BZ_OK);
  BZ2_bzDecompressEnd(&s);
  if (rc != BZ_STREAM_END || s.avail_in != 0) return std::nullopt;
  return out;
}

struct Outcome {
  std::optional<ErrorKind> error;
  Bytes out;
};

Outcome ours(const Bytes& in, int threads = 2) {
  auto r = testing::gp_decompress(in, threads);
  Outcome o;
  if (r.error) o.error = r.error->kind();
  o.out = std::move(r.out);
  return o;
}

// Rejected by us with `kind`, and by libbzip2.
void require_rejected(const Bytes& stream, ErrorKind kind) {
  for (int threads : {1, 2}) {
    auto r = ours(stream, threads);
    REQUIRE(r.error.has_value());
    REQUIRE(*r.error == kind);
  }
  REQUIRE_FALSE(libbzip2_decode(stream).has_value());
}

void require_decodes_to(const Bytes& stream, const Bytes& data) {
  auto ref = libbzip2_decode(stream);
  REQUIRE(ref.has_value());
  REQUIRE(*ref == data);
  for (int threads : {1, 2}) {
    auto r = ours(stream, threads);
    REQUIRE_FALSE(r.error.has_value());
    REQUIRE(r.out == data);
  }
}

const Bytes kText = [] {
  std::string s = "hostile input: the quick brown fox jumps over the lazy dog, aaaaaaa bbbbb 0123456789";
  return Bytes(s.begin(), s.end());
}();

}  // namespace

TEST_CASE("crafted streams are valid when nothing is broken", "[reliability][hostile]") {
  Bytes second(300, 'q');
  second.push_back('!');
  require_decodes_to(make_stream({make_block(kText)}), kText);
  Bytes both = kText;
  both.insert(both.end(), second.begin(), second.end());
  require_decodes_to(make_stream({make_block(kText), make_block(second)}, {.level = '1'}), both);
}

TEST_CASE("randomised blocks (bzip2 0.9.0) are decoded", "[reliability][hostile]") {
  Bytes data;
  for (int i = 0; i < 3000; i++) data.push_back(uint8_t("abcdefgh"[i % 8] + i / 700));
  require_decodes_to(make_stream({make_block(data, true)}), data);
}

TEST_CASE("a code length of 20 is accepted", "[reliability][hostile]") {
  // 20 byte values without runs: 22 symbols with RUNA, RUNB and EOB.
  Bytes data;
  for (int rep = 0; rep < 5; rep++)
    for (int c = 0; c < 20; c++) data.push_back(uint8_t('A' + c));
  Block b = make_block(data);
  REQUIRE(b.alpha_size() == 22);
  // 2, 2, 2, 3, 4, ..., 19, 20, 20: a complete code whose longest codes are 20 bits.
  std::vector<int> len = {2, 2, 2};
  for (int l = 3; l <= 20; l++) len.push_back(l);
  len.push_back(20);
  REQUIRE(len.size() == 22);
  b.lengths.assign(2, len);
  require_decodes_to(make_stream({b}), data);
}

TEST_CASE("bad stream header", "[reliability][hostile]") {
  for (char level : {'0', 'a', ':'}) {
    INFO(level);
    require_rejected(make_stream({make_block(kText)}, {.level = level}), ErrorKind::NotBzip2);
  }
  Bytes s = make_stream({make_block(kText)});
  s[2] = '0';
  require_rejected(s, ErrorKind::NotBzip2);
}

TEST_CASE("bad block magic", "[reliability][hostile]") {
  Block b = make_block(kText);
  b.magic ^= 1;
  require_rejected(make_stream({b}), ErrorKind::Corrupt);
}

TEST_CASE("origPtr past the block", "[reliability][hostile]") {
  Block b = make_block(kText);
  const uint32_t n = uint32_t(rle1(kText).size());
  for (uint32_t p : {n, n + 1, 900010u, 0xffffffu}) {
    INFO(p);
    b.orig_ptr = p;
    require_rejected(make_stream({b}), ErrorKind::Corrupt);
  }
}

TEST_CASE("no byte values in use", "[reliability][hostile]") {
  Block b = make_block(kText);
  b.used.fill(false);
  require_rejected(make_stream({b}), ErrorKind::Corrupt);
}

TEST_CASE("table count outside 2..6", "[reliability][hostile]") {
  for (uint32_t groups : {0u, 1u, 7u}) {
    INFO(groups);
    Block b = make_block(kText);
    b.n_groups = groups;
    b.lengths.assign(groups, b.lengths[0]);
    require_rejected(make_stream({b}), ErrorKind::Corrupt);
  }
}

TEST_CASE("no selectors", "[reliability][hostile]") {
  Block b = make_block(kText);
  b.selectors.clear();
  require_rejected(make_stream({b}), ErrorKind::Corrupt);
}

TEST_CASE("selector beyond the table count", "[reliability][hostile]") {
  for (uint32_t groups : {2u, 6u}) {
    INFO(groups);
    Block b = make_block(kText);
    b.n_groups = groups;
    b.lengths.assign(groups, b.lengths[0]);
    b.selectors[0] = groups;
    require_rejected(make_stream({b}), ErrorKind::Corrupt);
  }
}

TEST_CASE("code lengths outside 1..20", "[reliability][hostile]") {
  for (int bad : {0, 21, 31}) {
    INFO(bad);
    Block b = make_block(kText);
    b.lengths[1][2] = bad;
    require_rejected(make_stream({b}), ErrorKind::Corrupt);
  }
}

TEST_CASE("oversubscribed Huffman tables", "[reliability][hostile]") {
  // One code made shorter oversubscribes the code space. Table 1 is never selected, and
  // is still checked.
  for (int table : {0, 1}) {
    INFO("table " << table);
    Block b = make_block(kText);
    auto& len = b.lengths[size_t(table)];
    len[size_t(std::max_element(len.begin(), len.end()) - len.begin())]--;
    auto r = ours(make_stream({b}));
    REQUIRE(r.error.has_value());
    REQUIRE(*r.error == ErrorKind::Corrupt);
  }
}

TEST_CASE("incomplete Huffman tables", "[reliability][hostile]") {
  // bzip2 accepts a code with unused code words as long as none is read, so we do too;
  // reading one is corruption.
  Block b = make_block(kText);
  auto& len = b.lengths[0];
  len[size_t(std::max_element(len.begin(), len.end()) - len.begin())]++;
  require_decodes_to(make_stream({b}), kText);
  b.unused_code_at = b.symbols.size() / 2;
  require_rejected(make_stream({b}), ErrorKind::Corrupt);
}

TEST_CASE("more symbols than the level's block size", "[reliability][hostile]") {
  // A run of zeros of exactly 100000 fits a -1 block; one more byte does not. The
  // block's bytes are 'a' repeated, an all-equal BWT with any origPtr.
  for (uint64_t n : {100000u, 100001u, 900001u}) {
    INFO(n);
    Block b;
    b.used['a'] = true;
    for (uint64_t z = n; z > 0; z = (z - 1) / 2) b.symbols.push_back(int((z - 1) % 2));
    b.symbols.push_back(2);
    b.lengths.assign(2, complete_lengths(3));
    b.selectors.assign((b.symbols.size() + 49) / 50, 0);
    b.crc = block_crc(unrle1(Bytes(n, 'a')));
    auto stream = make_stream({b}, {.level = '1'});
    if (n == 100000)
      require_decodes_to(stream, unrle1(Bytes(n, 'a')));
    else
      require_rejected(stream, ErrorKind::Corrupt);
  }
  // The same overflow made of MTF values instead of one run.
  Block b;
  b.used['a'] = b.used['b'] = true;
  b.symbols.assign(100001, 2);
  b.symbols.push_back(3);
  b.lengths.assign(2, complete_lengths(4));
  b.selectors.assign((b.symbols.size() + 49) / 50, 0);
  require_rejected(make_stream({b}, {.level = '1'}), ErrorKind::Corrupt);
}

TEST_CASE("CRC mismatches", "[reliability][hostile]") {
  Block b = make_block(kText);
  b.crc ^= 0x100;
  require_rejected(make_stream({b}), ErrorKind::Corrupt);
  require_rejected(make_stream({make_block(kText)}, {.combined_crc = 12345}), ErrorKind::Corrupt);
}

TEST_CASE("streams that end early", "[reliability][hostile]") {
  const Bytes whole = make_stream({make_block(kText)});
  require_rejected(make_stream({make_block(kText)}, {.end_marker = false}), ErrorKind::Truncated);
  for (size_t keep : {size_t(4), size_t(10), whole.size() / 2, whole.size() - 1}) {
    INFO(keep);
    require_rejected(Bytes(whole.begin(), whole.begin() + long(keep)), ErrorKind::Truncated);
  }
}

TEST_CASE("more than 18002 selectors, as bzip2 1.0.8 accepts", "[reliability][hostile]") {
  // bzip2 1.0.8 reads up to 32767 selectors and ignores those past 18002.
  Block b = make_block(kText);
  b.selectors.resize(18010, 1);
  require_decodes_to(make_stream({b}), kText);
}
