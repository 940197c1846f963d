// --perturb: deep blocks written as bzip2's randomised blocks. The rule (which blocks),
// streams that libbzip2 and our decoder read back exactly at every level, and the
// default mode, which never sets the randomised bit.
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/rand_table.h"
#include "compress/block_reader.h"
#include "compress/cpu_station.h"
#include "compress/perturb.h"
#include "compress/stream_writer.h"
#include "decompress/block_decoder.h"
#include "generators.h"
#include "test_helpers.h"

using gpbzip2::corpus::generate;
using gpbzip2::format::block_limit;

namespace {

// The first RLE'd block of the input at -9.
std::vector<uint8_t> first_block(const std::vector<uint8_t>& in) {
  gpbzip2::MemorySource src(in);
  gpbzip2::BlockReader reader(src, 9);
  gpbzip2::RawBlock b;
  REQUIRE(reader.next(b));
  gpbzip2::ByteVector scratch;
  gpbzip2::finish_block(b, scratch);
  const auto text = b.text();
  return {text.begin(), text.end()};
}

bool deep(const std::vector<uint8_t>& b) { return gpbzip2::sort_would_be_deep(b.data(), b.size()); }
bool perturbs(const std::vector<uint8_t>& b) {
  return gpbzip2::worth_perturbing(b.data(), b.size());
}

// Random bytes with bytes [from, from + len) copied to `to`.
std::vector<uint8_t> with_copy(size_t n, size_t from, size_t len, size_t to) {
  auto v = generate("random", n, 17);
  std::copy(v.begin() + std::ptrdiff_t(from), v.begin() + std::ptrdiff_t(from + len),
            v.begin() + std::ptrdiff_t(to));
  return v;
}

// Files as a tar lays them out (a 512-byte header, the contents padded to 512 bytes), text
// and binary of 2 to 60 kB, every fourth a copy of one of the last three: the repeats of a
// source tree, a few long enough to make a block deep.
std::vector<uint8_t> tar_like(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> files;
  std::vector<uint8_t> out;
  while (out.size() < size) {
    std::vector<uint8_t> f;
    if (files.size() >= 3 && rng() % 4 == 0)
      f = files[files.size() - 1 - rng() % 3];
    else
      f = generate(rng() % 2 ? "text" : "binary", 2000 + rng() % 58000, rng());
    char header[512] = {};
    std::snprintf(header, sizeof header, "src/file%zu.c", files.size());
    std::snprintf(header + 124, 12, "%011zo", f.size());
    out.insert(out.end(), header, header + 512);
    out.insert(out.end(), f.begin(), f.end());
    out.resize((out.size() + 511) / 512 * 512);
    files.push_back(std::move(f));
  }
  out.resize(size);
  return out;
}

// The randomised bit of each block of a one-stream .bz2, read with our decoder.
std::vector<bool> randomised_bits(std::vector<uint8_t> bz) {
  const size_t size = bz.size();
  bz.resize(size + 8);  // the decoder reads ahead
  auto magic_at = [&](uint64_t bit) {
    uint64_t m = 0;
    for (uint64_t i = bit; i < bit + 48; i++) m = m << 1 | ((bz[i / 8] >> (7 - i % 8)) & 1);
    return m;
  };
  gpbzip2::BlockDecoder dec;
  std::vector<bool> bits;
  uint64_t bit = 32;  // after "BZh9"
  while (magic_at(bit) == gpbzip2::format::kBlockMagic) {
    REQUIRE(dec.decode_symbols(bz.data(), size, bit) == gpbzip2::BlockDecoder::Status::Ok);
    bits.push_back(dec.randomised());
    bit = dec.end_bit();
  }
  REQUIRE(magic_at(bit) == gpbzip2::format::kEndMagic);
  return bits;
}

gpbzip2::CompressOptions options(int level, bool perturb, int threads = 2) {
  gpbzip2::CompressOptions o;
  o.level = level;
  o.threads = threads;
  o.gpu = gpbzip2::GpuMode::Off;
  o.perturb = perturb;
  return o;
}

// Compressed with --perturb: libbzip2 and our decoder give the input back, and the blocks
// marked randomised are the ones the totals count. Returns how many there are.
size_t check_perturbed(const std::vector<uint8_t>& in, int level) {
  gpbzip2::CompressTotals totals;
  const auto bz = testing::gp_compress(in, options(level, true), &totals);
  const auto bits = randomised_bits(bz);
  const size_t randomised = size_t(std::count(bits.begin(), bits.end(), true));
  CHECK(totals.blocks == bits.size());
  CHECK(totals.perturbed_blocks == randomised);
  CHECK(testing::bzip2_decompress(bz, in.size()) == in);
  const auto ours = testing::gp_decompress(bz, 2);
  CHECK(!ours.error);
  CHECK(ours.out == in);
  return randomised;
}

const std::string kPattern64 = "qwertyuiopasdfghjklzxcvbnmqazwsxedcrfvtgbyhnujmikolpplokmijnuhbz";

}  // namespace

TEST_CASE("the rule perturbs deep blocks and leaves ordinary ones alone", "[perturb]") {
  CHECK(perturbs(first_block(generate("fibonacci", 900000))));
  CHECK(perturbs(first_block(generate("thue-morse", 900000))));
  CHECK(perturbs(first_block(generate("repeat", 900000, 1, "100000"))));
  // Periodic blocks whose period divides them have equal rotations, which bzip2 orders
  // by its own sort's rules: the GPU's doubling never ends on those either.
  CHECK(perturbs(first_block(generate("periodic", 64 * 14000, 1, kPattern64))));
  CHECK(perturbs(first_block(with_copy(900000, 1000, 50000, 500000))));

  CHECK(!perturbs(first_block(generate("text", 900000, 3))));
  CHECK(!perturbs(first_block(generate("binary", 900000, 3))));
  CHECK(!perturbs(first_block(generate("random", 900000, 3))));
  CHECK(!perturbs(first_block(generate("edits", 900000, 3))));  // repeats under 8 kB
  CHECK(!perturbs(first_block(with_copy(900000, 1000, 25000, 500000))));
  // A pattern cut where it does not divide the block: the CPU orders it from its period
  // in a few ms, unperturbed.
  CHECK(!perturbs(first_block(generate("periodic", 900000, 1, kPattern64))));
  // A block no longer than the deep prefix cannot be deep, periodic or not.
  CHECK(!perturbs(first_block(generate("periodic", gpbzip2::kDeepPrefix, 1, kPattern64))));
  const auto dickens = testing::silesia_dir() / "dickens";
  if (std::filesystem::exists(dickens)) {
    auto text = testing::read_file(dickens);
    text.resize(900000);
    CHECK(!perturbs(first_block(text)));
  }
}

TEST_CASE("the estimate finds a planted repeat whatever its distance", "[perturb]") {
  for (size_t len : {size_t(5000), size_t(25000), size_t(50000), size_t(100000)})
    for (size_t distance : {len, len + 1, size_t(277777), size_t(600000)}) {
      INFO(len << " bytes copied " << distance << " bytes further on");
      const auto b = with_copy(900000, 100, len, 100 + distance);
      const uint32_t est = gpbzip2::estimate_longest_repeat(b.data(), b.size());
      // Up to a partial chunk at each end is missed (chunks are ~256 bytes here).
      CHECK(est <= len + 64);
      CHECK(est + 2048 >= len);
      CHECK(deep(b) == (est >= gpbzip2::kDeepPrefix));
    }
}

TEST_CASE("repeats at the flips' period are left alone: the flips would not break them",
          "[perturb]") {
  const size_t period = gpbzip2::kRandomisePeriod;
  REQUIRE(period == 278212);
  auto b = first_block(generate("repeat", 900000, 1, std::to_string(period)));
  REQUIRE(deep(b));
  CHECK(gpbzip2::longest_flip_aligned_repeat(b.data(), b.size()) >= b.size() - period - 8);
  CHECK(!perturbs(b));
  // Why: bytes one period apart get the same flips, so the copies stay equal.
  gpbzip2::flip_randomised_bits(b.data(), b.size());
  CHECK(std::equal(b.begin(), b.end() - std::ptrdiff_t(period), b.begin() + std::ptrdiff_t(period)));
}

TEST_CASE("perturbed streams decode exactly at every level", "[perturb][oracle]") {
  size_t tar_perturbed = 0;
  for (int level = 1; level <= 9; level++) {
    // A full block and a short one, as the hard inputs' test has them.
    const size_t size = size_t(block_limit(level)) + 1009 * size_t(level);
    for (const char* kind : {"fibonacci", "thue-morse", "repeat", "periodic"}) {
      INFO(kind << " -" << level);
      const std::string pattern = kind == std::string("repeat")     ? std::to_string(30011 * level)
                                  : kind == std::string("periodic") ? kPattern64
                                                                    : "";
      // The full block is deep, but for the Thue-Morse word's at -1: its longest repeat
      // (32770 bytes) takes 13 rounds, no more than silesia's deepest blocks; and the
      // periodic one is ordered from its period (64 does not divide a block limit).
      const size_t deep =
          kind == std::string("periodic") || (kind == std::string("thue-morse") && level == 1) ? 0 : 1;
      CHECK(check_perturbed(generate(kind, size, uint64_t(level), pattern), level) == deep);
    }
    INFO("tar-like -" << level);
    tar_perturbed += check_perturbed(tar_like(3 * size_t(block_limit(level)), uint64_t(level)), level);
  }
  // Somewhere a block holds a file and its copy.
  CHECK(tar_perturbed > 0);
}

TEST_CASE("perturbed output does not depend on the thread count", "[perturb]") {
  auto in = generate("fibonacci", 2500000, 2);
  const auto one = testing::gp_compress(in, options(9, true, 1));
  CHECK(testing::gp_compress(in, options(9, true, 2)) == one);
  CHECK(testing::gp_compress(in, options(9, true, 3)) == one);
}

TEST_CASE("without perturb no block is randomised: bzip2's bytes", "[perturb][oracle]") {
  for (int level : {1, 9}) {
    for (const auto& in : {generate("fibonacci", 2 * size_t(block_limit(level)), 4),
                           generate("periodic", 2 * size_t(block_limit(level)), 4, kPattern64),
                           tar_like(2 * size_t(block_limit(level)), 4)}) {
      gpbzip2::CompressTotals totals;
      const auto bz = testing::gp_compress(in, options(level, false), &totals);
      const auto bits = randomised_bits(bz);
      CHECK(std::count(bits.begin(), bits.end(), true) == 0);
      CHECK(totals.perturbed_blocks == 0);
      CHECK(bz == testing::bzip2_reference(in, level));
    }
  }
}

TEST_CASE("a randomised block that is still periodic codes as bzip2 reads it", "[perturb]") {
  // Two copies of one flips' period: the flips repeat with the copies, so the randomised
  // block is periodic too (the GPU hands such a block back; the CPU sorts it). The rule
  // would not perturb it; the encoder must cope all the same.
  const auto in = generate("repeat", 2 * gpbzip2::kRandomisePeriod, 9,
                           std::to_string(gpbzip2::kRandomisePeriod));
  gpbzip2::MemorySource src(in);
  gpbzip2::BlockReader reader(src, 9);
  gpbzip2::Job job;
  REQUIRE(reader.next(job.raw));
  // Prepared as a station prepares a block, flipped whatever the rule says.
  gpbzip2::ByteVector scratch;
  job.crc = gpbzip2::finish_block(job.raw, scratch);
  const size_t n = job.raw.rle_bytes;
  uint8_t* const t = job.raw.buffer.data();
  gpbzip2::flip_randomised_bits(t, n);
  job.randomised = job.prepared = true;
  REQUIRE(n == 2 * gpbzip2::kRandomisePeriod);
  REQUIRE(std::equal(t, t + gpbzip2::kRandomisePeriod, t + gpbzip2::kRandomisePeriod));
  gpbzip2::BlockCompressor compressor;
  gpbzip2::VectorSink sink;
  gpbzip2::StreamWriter writer(sink, 9);
  writer.add(compressor.compress(job));
  writer.finish();
  CHECK(randomised_bits(sink.data) == std::vector<bool>{true});
  CHECK(testing::bzip2_decompress(sink.data, in.size()) == in);
  CHECK(testing::gp_decompress(sink.data, 2).out == in);
}
