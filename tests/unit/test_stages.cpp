// Unit tests of the small stages: CRC, bit packing, Huffman code construction, the
// encoder's two entry points (the block reader's are in test_block_reader.cpp).
#include <algorithm>
#include <catch2/catch.hpp>

#include <atomic>
#include <random>
#include <thread>

#include "compress/block_encoder.h"
#include "compress/bwt.h"
#include "common/bit_writer.h"
#include "common/crc32.h"
#include "common/format.h"
#include "generators.h"
#include "compress/huffman.h"
#include "test_helpers.h"

extern "C" void BZ2_hbMakeCodeLengths(unsigned char* len, int* freq, int alpha, int max_len);

TEST_CASE("CRC is CRC-32/BZIP2", "[crc]") {
  const char* check = "123456789";
  uint32_t crc = ~gpbzip2::crc32_update(0xffffffffu, reinterpret_cast<const uint8_t*>(check), 9);
  REQUIRE(crc == 0xFC891918u);
  // Slicing by 16 and byte at a time agree at every length and alignment.
  auto data = gpbzip2::corpus::generate("random", 100, 1);
  for (size_t len = 0; len <= 40; len++) {
    uint32_t a = gpbzip2::crc32_update(0xffffffffu, data.data() + 3, len), b = 0xffffffffu;
    for (size_t i = 0; i < len; i++) b = gpbzip2::crc32_byte(b, data[3 + i]);
    REQUIRE(a == b);
  }
}

TEST_CASE("CRC by carry-less multiplication equals the tables' CRC", "[crc]") {
  // Every length up to a few kB (all chunk and tail counts), at all 16 alignments, from
  // random running CRCs; then whole blocks.
  std::mt19937 rng(7);
  auto data = gpbzip2::corpus::generate("random", 1000000, 2);
  for (size_t len = 0; len <= 5000; len++) {
    const size_t at = rng() % 16;
    const uint32_t crc = uint32_t(rng());
    REQUIRE(gpbzip2::crc32_update(crc, data.data() + at, len) ==
            gpbzip2::crc32_update_tables(crc, data.data() + at, len));
  }
  for (size_t len : {size_t(900000), size_t(999983)}) {
    REQUIRE(gpbzip2::crc32_update(~0u, data.data() + 1, len) ==
            gpbzip2::crc32_update_tables(~0u, data.data() + 1, len));
  }
}

TEST_CASE("CRC through a run equals the CRC of its bytes", "[crc]") {
  std::mt19937 rng(7);
  std::vector<uint8_t> fill(1000);
  for (int i = 0; i < 2000; i++) {
    const uint32_t crc = uint32_t(rng());
    const auto byte = uint8_t(rng());
    const size_t count = i < 600 ? size_t(i) : rng() % fill.size();
    std::fill(fill.begin(), fill.end(), byte);
    CHECK(gpbzip2::crc32_run(crc, byte, count) ==
          gpbzip2::crc32_update_tables(crc, fill.data(), count));
  }
}

TEST_CASE("BitWriter packs MSB first and appends at any bit offset", "[bits]") {
  gpbzip2::BitWriter w;
  w.put(3, 0b101);
  w.put(5, 0b10011);
  w.put(12, 0xABC);
  REQUIRE(w.bit_count() == 20);
  auto bytes = w.finish();
  REQUIRE(bytes == std::vector<uint8_t>{0b10110011, 0xAB, 0xC0});

  std::vector<uint8_t> src = {0xDE, 0xAD, 0xBE, 0xEF, 0x55};
  for (int offset = 0; offset < 8; offset++)
    for (uint64_t nbits : {0, 1, 7, 8, 31, 32, 33, 39}) {
      gpbzip2::BitWriter a, b;
      a.put(offset, 0);
      b.put(offset, 0);
      a.append(src.data(), nbits);
      for (uint64_t i = 0; i < nbits; i++) b.put(1, (src[i / 8] >> (7 - i % 8)) & 1);
      REQUIRE(a.bit_count() == b.bit_count());
      REQUIRE(a.finish() == b.finish());
    }
}

TEST_CASE("BitWriter::Burst puts what put puts, from any state", "[bits]") {
  std::mt19937 rng(5);
  for (int before = 0; before < 70; before++) {
    gpbzip2::BitWriter a, b;
    for (int i = 0; i < before; i++) a.put(1, i % 3 == 0), b.put(1, i % 3 == 0);
    std::vector<std::pair<int, uint64_t>> codes;  // up to 56 bits, as Burst takes them
    uint64_t total = 0;
    for (int i = 0; i < 200; i++) {
      int n = 1 + int(rng() % 56);
      codes.emplace_back(n, (uint64_t(rng()) << 32 | rng()) >> (64 - n));
      total += uint64_t(n);
    }
    {
      gpbzip2::BitWriter::Burst burst(a, total);
      for (auto [n, v] : codes) burst.put(n, v);
    }
    for (auto [n, v] : codes) {
      if (n > 32) b.put(n - 32, uint32_t(v >> 32));
      b.put(std::min(n, 32), uint32_t(v));
    }
    a.put(7, 0x55), b.put(7, 0x55);
    REQUIRE(a.bit_count() == b.bit_count());
    REQUIRE(a.finish() == b.finish());
  }
}

TEST_CASE("Huffman code lengths equal libbzip2's", "[huffman]") {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 500; trial++) {
    int alpha = 3 + int(rng() % 256);
    int freq[gpbzip2::format::kMaxAlphaSize];
    for (int i = 0; i < alpha; i++) {
      switch (trial % 4) {
        case 0: freq[i] = int(rng() % 1000); break;
        case 1: freq[i] = (rng() % 4) ? 0 : int(rng() % 50); break;
        case 2: freq[i] = i < 30 ? (1 << (i % 20)) : 1; break;  // forces the length limit
        default: freq[i] = int(rng() % 3400); break;  // totals stay within a block
      }
    }
    unsigned char ref[gpbzip2::format::kMaxAlphaSize];
    uint8_t ours[gpbzip2::format::kMaxAlphaSize];
    BZ2_hbMakeCodeLengths(ref, freq, alpha, 17);
    gpbzip2::make_code_lengths(ours, freq, alpha, 17);
    INFO("trial " << trial);
    REQUIRE(std::equal(ours, ours + alpha, ref));
    // Canonical codes are prefix-free and complete.
    uint32_t code[gpbzip2::format::kMaxAlphaSize];
    gpbzip2::assign_codes(code, ours, alpha);
    double kraft = 0;
    for (int i = 0; i < alpha; i++) kraft += 1.0 / double(1u << ours[i]);
    REQUIRE(kraft == Approx(1.0));
    bool prefix_free = true;
    for (int i = 0; i < alpha; i++)
      for (int j = i + 1; j < alpha; j++) {
        int l = std::min(ours[i], ours[j]);
        prefix_free &= (code[i] >> (ours[i] - l)) != (code[j] >> (ours[j] - l));
      }
    REQUIRE(prefix_free);
  }
}

TEST_CASE("A block coded from MTF positions equals one coded from its last column", "[encoder]") {
  using gpbzip2::corpus::generate;
  for (const auto& block : {generate("text", 900000, 1), generate("binary", 300000, 2),
                            generate("runs", 200000, 3), generate("random", 100000, 4),
                            std::vector<uint8_t>(5000, 'a'), std::vector<uint8_t>{'z'},
                            generate("text", 777, 5)}) {
    gpbzip2::BwtWorkspace ws;
    gpbzip2::BwtResult r;
    gpbzip2::bwt_forward(block.data(), int32_t(block.size()), ws, r);
    bool in_use[256] = {};
    for (uint8_t c : block) in_use[c] = true;
    const std::vector<uint8_t> positions = testing::mtf_positions(r.last);
    std::vector<uint16_t> symbols(gpbzip2::symbol_capacity(int32_t(block.size())));
    gpbzip2::EncoderWorkspace enc;
    enc.symbols = symbols.data();
    gpbzip2::BitWriter a, b;
    gpbzip2::encode_block(r.last.data(), int32_t(block.size()), r.orig_ptr, 0x12345678, false,
                          enc, a);
    gpbzip2::encode_mtf_block(positions.data(), int32_t(block.size()), in_use, r.orig_ptr,
                              0x12345678, false, enc, b);
    REQUIRE(a.bit_count() == b.bit_count());
    REQUIRE(a.finish() == b.finish());
  }
}

TEST_CASE("A block coded by a team gives the bits of one coded alone", "[encoder][shared]") {
  using gpbzip2::corpus::generate;
  // Any bytes serve as a last column. Stretches begin where the byte changes: long runs
  // across their nominal starts, bytes used only late, only high bytes (the first symbol
  // of each leaves out the unused ones below it), the smallest byte first or not.
  std::vector<uint8_t> runs_across;
  for (int i = 0; i < 12; i++) runs_across.insert(runs_across.end(), 70000, uint8_t("ab"[i % 2]));
  std::vector<uint8_t> late = generate("text", 200000, 7);
  late.insert(late.end(), {0x01, 0xfe, 0x01, 0x00});
  std::vector<uint8_t> high = generate("random", 150000, 8);
  for (uint8_t& c : high) c |= 0xf0;
  std::vector<uint8_t> smallest_first = generate("text", 120000, 9);
  smallest_first[0] = 0;
  std::vector<uint8_t> one_change(300000, 'x');
  one_change[299999] = 'y';
  const std::vector<std::vector<uint8_t>> blocks = {
      generate("text", 900000, 1), generate("binary", 300000, 2), generate("runs", 200000, 3),
      generate("random", 100000, 4), std::vector<uint8_t>(50000, 'a'), {'z'},
      generate("text", 777, 5), generate("fibonacci", 400000, 1), runs_across, late, high,
      smallest_first, one_change};
  auto encode = [](const std::vector<uint8_t>& last, const gpbzip2::Team* team) {
    std::vector<uint16_t> symbols(gpbzip2::symbol_capacity(int32_t(last.size())));
    gpbzip2::EncoderWorkspace enc;
    enc.symbols = symbols.data();
    gpbzip2::BitWriter out;
    gpbzip2::encode_block(last.data(), int32_t(last.size()), 7, 0x12345678, false, enc, out, team);
    return std::pair(out.bit_count(), out.finish());
  };
  // Tasks in reverse order on one thread, and on threads that take them as they come.
  const gpbzip2::RunTogether backwards = [](size_t tasks, const std::function<void(size_t)>& body) {
    for (size_t i = tasks; i-- > 0;) body(i);
  };
  const gpbzip2::RunTogether threaded = [](size_t tasks, const std::function<void(size_t)>& body) {
    std::atomic<size_t> next = 0;
    std::vector<std::thread> helpers;
    for (int h = 0; h < 3; h++)
      helpers.emplace_back([&] {
        for (size_t i; (i = next++) < tasks;) body(i);
      });
    for (auto& t : helpers) t.join();
  };
  for (size_t b = 0; b < blocks.size(); b++) {
    INFO("block " << b);
    const auto alone = encode(blocks[b], nullptr);
    for (int threads : {1, 3, 16}) {
      INFO(threads << " threads");
      const gpbzip2::Team reversed{backwards, threads}, together{threaded, threads};
      REQUIRE(encode(blocks[b], &reversed) == alone);
      REQUIRE(encode(blocks[b], &together) == alone);
    }
  }
}

TEST_CASE("MTF positions at or past the count of bytes in use are refused", "[encoder]") {
  // The text itself in place of its positions, as a lane that wrote nothing would leave it.
  const std::vector<uint8_t> block = gpbzip2::corpus::generate("text", 100000, 6);
  bool in_use[256] = {};
  for (uint8_t c : block) in_use[c] = true;
  std::vector<uint16_t> symbols(gpbzip2::symbol_capacity(int32_t(block.size())));
  gpbzip2::EncoderWorkspace enc;
  enc.symbols = symbols.data();
  gpbzip2::BitWriter out;
  REQUIRE_THROWS_AS(gpbzip2::encode_mtf_block(block.data(), int32_t(block.size()), in_use, 0,
                                              0, false, enc, out),
                    gpbzip2::Error);
}
