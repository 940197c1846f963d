// Decoding what libbzip2 writes: byte-exact output at every level and thread count,
// concatenated streams, trailing garbage, test mode, streaming from small reads.
#include <algorithm>
#include <catch2/catch.hpp>

#include "decompress/block_scanner.h"
#include "generators.h"
#include "test_helpers.h"

using gpbzip2::corpus::generate;

namespace {

std::vector<uint8_t> decode(const std::vector<uint8_t>& bz, int threads,
                            gpbzip2::DecompressTotals* totals = nullptr) {
  auto r = testing::gp_decompress(bz, threads);
  if (r.error) throw *r.error;
  if (totals) *totals = r.totals;
  return r.out;
}

gpbzip2::ErrorKind error_kind(const std::vector<uint8_t>& bz, int threads) {
  auto r = testing::gp_decompress(bz, threads);
  if (!r.error) FAIL("no error");
  return r.error->kind();
}

// Blocks in a stream, by their magics.
size_t count_blocks(const std::vector<uint8_t>& bz) {
  std::vector<gpbzip2::MagicHit> hits;
  gpbzip2::scan_for_magic(bz.data(), bz.size(), 0, bz.size(), hits);
  return size_t(std::count_if(hits.begin(), hits.end(), [](auto& h) { return !h.end_of_stream; }));
}

std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> r;
  for (const auto& p : parts) r.insert(r.end(), p.begin(), p.end());
  return r;
}

}  // namespace

TEST_CASE("decodes libbzip2 output of every kind at every level", "[decoder]") {
  for (const auto& kind : gpbzip2::corpus::kinds())
    for (int level = 1; level <= 9; level++) {
      INFO(kind << " -" << level);
      const auto in = generate(kind, 120000 + 30000 * size_t(level), uint64_t(level));
      const auto bz = testing::bzip2_reference(in, level);
      for (int threads : {1, 2, 3}) REQUIRE(decode(bz, threads) == in);
    }
}

TEST_CASE("empty, tiny and run-heavy inputs", "[decoder]") {
  gpbzip2::DecompressTotals t;
  REQUIRE(decode(testing::bzip2_reference({}, 9), 2, &t).empty());
  REQUIRE(t.streams == 1);
  REQUIRE(decode(testing::bzip2_reference({'x'}, 1), 1) == std::vector<uint8_t>{'x'});
  std::vector<uint8_t> runs;
  for (int len = 1; len <= 300; len++) runs.insert(runs.end(), size_t(len), uint8_t(len % 3));
  REQUIRE(decode(testing::bzip2_reference(runs, 1), 2) == runs);
  for (int len : {3, 4, 5, 259, 260, 1000}) {
    const std::vector<uint8_t> same(size_t(len), 'z');
    REQUIRE(decode(testing::bzip2_reference(same, 9), 1) == same);
  }
}

TEST_CASE("blocks that expand far beyond what a worker keeps", "[decoder]") {
  // 900 kB of BWT text expands to ~46 MB of zeros; the output is produced twice.
  const std::vector<uint8_t> zeros(50u << 20, 0);
  const auto bz = testing::bzip2_reference(zeros, 9);
  gpbzip2::DecompressTotals t;
  REQUIRE(decode(bz, 2, &t) == zeros);
  REQUIRE(t.bytes_out == zeros.size());
}

TEST_CASE("concatenated streams decode to the concatenation", "[decoder]") {
  const auto a = generate("text", 250000, 1), b = generate("binary", 120000, 2);
  const auto bz = cat({testing::bzip2_reference(a, 1), testing::bzip2_reference({}, 9),
                       testing::bzip2_reference(b, 3), testing::bzip2_reference(a, 9)});
  for (int threads : {1, 2}) {
    gpbzip2::DecompressTotals t;
    REQUIRE(decode(bz, threads, &t) == cat({a, b, a}));
    REQUIRE(t.streams == 4);
    REQUIRE_FALSE(t.trailing_garbage);
    REQUIRE(t.bytes_in == bz.size());
    REQUIRE(t.bytes_out == 2 * a.size() + b.size());
  }
}

TEST_CASE("trailing garbage is reported and the data kept, as bzip2 does", "[decoder]") {
  const auto in = generate("text", 300000, 3);
  const auto bz = testing::bzip2_reference(in, 2);
  for (std::string tail : {std::string("x"), std::string("garbage after the stream"),
                           std::string("BZh0"), std::string("BZx9"), std::string(5, '\0')}) {
    INFO(tail);
    gpbzip2::DecompressTotals t;
    REQUIRE(decode(cat({bz, std::vector<uint8_t>(tail.begin(), tail.end())}), 2, &t) == in);
    REQUIRE(t.trailing_garbage);
    REQUIRE(t.streams == 1);
  }
  // An input that stops inside the next stream header is truncated, as bzip2 says.
  for (std::string tail : {"B", "BZ", "BZh", "BZh9"}) {
    INFO(tail);
    REQUIRE(error_kind(cat({bz, std::vector<uint8_t>(tail.begin(), tail.end())}), 2) ==
            gpbzip2::ErrorKind::Truncated);
  }
}

TEST_CASE("inputs that are not bzip2 at all", "[decoder]") {
  for (std::string s : {std::string("hello world"), std::string("BZh0xxxxxxxxxx"),
                        std::string("BZ\0", 3), std::string("\x1f\x8b\x08\0", 4)}) {
    INFO(s);
    REQUIRE(error_kind(std::vector<uint8_t>(s.begin(), s.end()), 2) ==
            gpbzip2::ErrorKind::NotBzip2);
  }
  std::vector<uint8_t> empty;
  empty.reserve(1);  // MemorySource copies from data(), which must not be null
  REQUIRE(error_kind(empty, 1) == gpbzip2::ErrorKind::Truncated);  // bzip2 -d < /dev/null
  REQUIRE(error_kind({'B', 'Z'}, 1) == gpbzip2::ErrorKind::Truncated);
}

TEST_CASE("test mode checks every CRC and writes nothing", "[decoder]") {
  const auto in = generate("runs", 700000, 5);
  auto bz = testing::bzip2_reference(in, 1);
  gpbzip2::DecompressOptions o;
  o.threads = 2;
  {
    gpbzip2::MemorySource src(bz);
    auto t = gpbzip2::decompress_stream(src, nullptr, o);
    REQUIRE(t.bytes_out == in.size());
    REQUIRE(t.streams == 1);
  }
  bz[10] ^= 0x40;  // the first block's stored CRC
  gpbzip2::MemorySource src(bz);
  try {
    gpbzip2::decompress_stream(src, nullptr, o);
    FAIL("corruption not found");
  } catch (const gpbzip2::Error& e) {
    REQUIRE(e.kind() == gpbzip2::ErrorKind::Corrupt);
    REQUIRE(std::string(e.what()) ==
            "data integrity error in block 1 (bit offset 32): block CRC mismatch");
  }
}

TEST_CASE("error messages count blocks from 1 and bits from the start of the file", "[decoder]") {
  const auto in = generate("text", 350000, 9);
  const auto one = testing::bzip2_reference(in, 1);
  const size_t blocks = count_blocks(one);
  REQUIRE(blocks == 4);
  auto bz = cat({one, one});
  // The second stream's third block: find its magic and damage its stored CRC.
  std::vector<gpbzip2::MagicHit> hits;
  gpbzip2::scan_for_magic(bz.data(), bz.size(), one.size(), bz.size(), hits);
  REQUIRE(hits.size() >= 3);
  const uint64_t bit = hits[2].bit;
  bz[(bit + 48) / 8] ^= uint8_t(0x80 >> ((bit + 48) % 8));
  gpbzip2::MemorySource src(bz);
  gpbzip2::VectorSink sink;
  gpbzip2::DecompressOptions o;
  o.threads = 2;
  try {
    gpbzip2::decompress_stream(src, &sink, o);
    FAIL("corruption not found");
  } catch (const gpbzip2::Error& e) {
    REQUIRE(std::string(e.what()) == "data integrity error in block " + std::to_string(blocks + 3) +
                                         " (bit offset " + std::to_string(bit) +
                                         "): block CRC mismatch");
  }
  // Everything before the damaged block was written, and nothing of it.
  REQUIRE(sink.data.size() < 2 * in.size());
  REQUIRE(std::equal(sink.data.begin(), sink.data.begin() + ptrdiff_t(in.size()), in.begin()));
}

TEST_CASE("small reads and early output: the input is streamed", "[decoder]") {
  const auto in = generate("binary", 1500000, 4);
  const auto bz = testing::bzip2_reference(in, 1);
  for (int threads : {1, 2}) {
    testing::PieceSource src(bz, 4099);
    // Records how much input had been read when the first output arrived.
    struct FirstWrite final : gpbzip2::Sink {
      const testing::PieceSource* src;
      size_t read_then = 0;
      std::vector<uint8_t> data;
      void write(const uint8_t* p, size_t n) override {
        if (data.empty()) read_then = src->position();
        data.insert(data.end(), p, p + n);
      }
    } sink;
    sink.src = &src;
    gpbzip2::DecompressOptions o;
    o.threads = threads;
    gpbzip2::decompress_stream(src, &sink, o);
    REQUIRE(sink.data == in);
    REQUIRE(sink.read_then < bz.size());
  }
}

TEST_CASE("progress reports grow to the totals", "[decoder]") {
  const auto in = generate("text", 600000, 2);
  const auto bz = testing::bzip2_reference(in, 1);
  gpbzip2::MemorySource src(bz);
  gpbzip2::VectorSink sink;
  gpbzip2::DecompressOptions o;
  uint64_t last_in = 0, last_out = 0;
  int calls = 0;
  o.progress = [&](uint64_t i, uint64_t out) {
    REQUIRE(i >= last_in);
    REQUIRE(out >= last_out);
    last_in = i;
    last_out = out;
    calls++;
  };
  gpbzip2::decompress_stream(src, &sink, o);
  REQUIRE(size_t(calls) == count_blocks(bz));
  REQUIRE(last_out == in.size());
}
