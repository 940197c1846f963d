// Whole-stream output must equal what bzip2 writes, byte for byte, at every level.
#include <catch2/catch.hpp>

#include "common/format.h"
#include "generators.h"
#include "test_helpers.h"

using gpbzip2::corpus::generate;

static void require_identical(const std::vector<uint8_t>& in, int level, int threads = 2) {
  auto ours = testing::gp_compress(in, level, threads);
  auto ref = testing::bzip2_reference(in, level);
  REQUIRE(ours.size() == ref.size());
  REQUIRE(ours == ref);
}

TEST_CASE("empty and one-byte inputs", "[oracle]") {
  for (int level = 1; level <= 9; level++) {
    require_identical({}, level);
    require_identical({'x'}, level);
    require_identical({0}, level);
  }
}

TEST_CASE("runs of every length 1..260", "[oracle]") {
  std::vector<uint8_t> in;
  for (int len = 1; len <= 260; len++) in.insert(in.end(), size_t(len), uint8_t('a' + len % 3));
  require_identical(in, 1);
  for (int len = 1; len <= 260; len++) require_identical(std::vector<uint8_t>(size_t(len), 'z'), 9);
}

TEST_CASE("every generated kind at every level", "[oracle]") {
  for (const auto& kind : gpbzip2::corpus::kinds())
    for (int level = 1; level <= 9; level++) {
      INFO(kind << " -" << level);
      require_identical(generate(kind, 150000 + 7919 * size_t(level), uint64_t(level)), level);
    }
}

TEST_CASE("periodic blocks give bzip2's origPtr", "[oracle]") {
  for (std::string pat : {"ab", "bca", "abcabd", "a", "xyxyxyxz", "\x01\x02\x01"}) {
    INFO(pat);
    require_identical(generate("periodic", 2000, 1, pat), 9);
    require_identical(generate("periodic", 300001, 1, pat), 3);
  }
}

TEST_CASE("sizes around each level's block limit", "[oracle]") {
  // Random bytes have no runs, so the encoded size equals the input size and these
  // land exactly on the limit. Runs shift the boundary; the runs kind covers that.
  for (int level = 1; level <= 9; level++) {
    const int64_t limit = gpbzip2::format::block_limit(level);
    for (int64_t delta : {-19, -1, 0, 1, 19}) {
      INFO("level " << level << " delta " << delta);
      require_identical(generate("random", size_t(limit + delta), 7), level);
    }
  }
  for (int64_t delta : {-600, -5, -1, 0, 1, 5, 600})
    require_identical(generate("runs", size_t(gpbzip2::format::block_limit(1) * 3 + delta), 3), 1);
}

TEST_CASE("thread count does not change the output", "[oracle]") {
  auto in = generate("text", 1200000, 5);
  auto ref = testing::bzip2_reference(in, 2);
  for (int threads : {1, 2, 3, 8}) REQUIRE(testing::gp_compress(in, 2, threads) == ref);
  // Four -9 blocks on 16 threads: a station each, which share the sort of the last block
  // where it is popped once read whole (given four cores or more; timing decides).
  auto four = generate("text", 3000000, 6);
  auto ref9 = testing::bzip2_reference(four, 9);
  gpbzip2::CompressOptions o;
  o.level = 9;
  o.threads = 16;
  o.gpu = gpbzip2::GpuMode::Off;
  REQUIRE(testing::gp_compress(four, o) == ref9);
  // As a file: its size tells that every block's sort is shared from the first (given four
  // cores or more).
  o.input_size = four.size();
  REQUIRE(testing::gp_compress(four, o) == ref9);
}

TEST_CASE("long runs with many threads: scouts search ahead of the reader", "[oracle]") {
  // Each block stands for some 4-5 MB of input at -1: sixteen stations would sort faster
  // than the reader cuts, so it starts scouts after the first block.
  for (const std::string kind : {"runs", "zeros"}) {
    INFO(kind);
    const auto in = generate(kind, 20000000, 3);
    const auto ref = testing::bzip2_reference(in, 1);
    gpbzip2::CompressOptions o;
    o.level = 1;
    o.threads = 16;
    o.gpu = gpbzip2::GpuMode::Off;
    REQUIRE(testing::gp_compress(in, o) == ref);
    o.input_size = in.size();  // as a file: the scouts read the regions too
    REQUIRE(testing::gp_compress(in, o) == ref);
  }
}

TEST_CASE("Silesia files at -9 and -1", "[oracle][silesia]") {
  auto dir = testing::silesia_dir();
  if (!std::filesystem::exists(dir)) {
    WARN("skipped: " << dir << " not present");
    return;
  }
  for (const char* name : {"xml", "ooffice", "reymont"}) {
    auto in = testing::read_file(dir / name);
    INFO(name);
    require_identical(in, 9);
    require_identical(in, 1);
  }
}
