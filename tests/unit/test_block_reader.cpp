// The block reader against a byte-at-a-time model of bzip2's input stage: where blocks
// are cut, their run-length encoding and CRC (as the stations finish them) and sizes,
// whatever the data and however the source splits its reads. The reader counts the
// encoded size, so any slip in that count shows here as a cut in another place.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <thread>

#include "common/crc32.h"
#include "common/error.h"
#include "common/format.h"
#include "compress/block_reader.h"
#include "generators.h"
#include "test_helpers.h"

using gpbzip2::format::block_limit;

// Array allocations of this many bytes fail while set (0: none): a block reader given
// regions of this size then runs out of memory in its scouts, which allocate them. The
// replacements use malloc and free, as the library's defaults do.
static std::atomic<size_t> g_fail_arrays_of{0};
void* operator new[](std::size_t n) {
  if (n != 0 && n == g_fail_arrays_of.load()) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

// bzip2's first run-length encoding, one byte at a time (ADD_CHAR_TO_BLOCK and the
// block-full test of handle_compress): the model the reader must equal.
struct ReferenceBlock {
  std::vector<uint8_t> data;
  uint32_t crc = 0xffffffffu;
  uint64_t input_bytes = 0;
  bool has_runs = false;
};
std::vector<ReferenceBlock> reference_blocks(const std::vector<uint8_t>& in, int level) {
  const size_t limit = size_t(block_limit(level));
  std::vector<ReferenceBlock> blocks(1);
  int ch = -1, len = 0;
  auto flush = [&] {
    auto& b = blocks.back();
    for (int i = 0; i < std::min(len, 4); i++) b.data.push_back(uint8_t(ch));
    if (len >= 4) {
      b.data.push_back(uint8_t(len - 4));
      b.has_runs = true;
    }
    for (int i = 0; i < len; i++) b.crc = gpbzip2::crc32_byte(b.crc, uint8_t(ch));
    b.input_bytes += uint64_t(len);
  };
  for (uint8_t c : in) {
    if (c == ch && len < 255) {
      len++;
      continue;
    }
    if (len > 0) flush();
    if (blocks.back().data.size() >= limit) blocks.emplace_back();
    ch = c;
    len = 1;
  }
  if (len > 0) flush();
  if (blocks.back().data.empty()) blocks.pop_back();
  for (auto& b : blocks) b.crc = ~b.crc;
  return blocks;
}

// Every block the reader cuts from `src` equals the model's. With scouts, they read
// where the source reads at offsets (a file); elsewhere the reader reads and they search.
void check_reader(const std::vector<uint8_t>& in, int level, gpbzip2::Source& src, int scouts = 0,
                  size_t region_bytes = gpbzip2::BlockReader::kRegionBytes) {
  const auto want = reference_blocks(in, level);
  gpbzip2::BlockReader reader(src, level, region_bytes);
  gpbzip2::RawBlock b;
  gpbzip2::ByteVector scratch;
  size_t count = 0;
  uint64_t total = 0;
  while (reader.next(b)) {
    if (count == 0) reader.start_scouts(scouts);  // as compression does: after a block
    INFO("level " << level << " block " << count);
    REQUIRE(count < want.size());
    REQUIRE(b.index == count);
    REQUIRE(b.input_bytes == want[count].input_bytes);
    REQUIRE(b.rle_bytes == want[count].data.size());
    REQUIRE(b.has_runs == want[count].has_runs);
    // What the block holds as read is bounded, however long its runs.
    REQUIRE(b.as_read <= size_t(block_limit(level)) + gpbzip2::BlockReader::kMostSaved + 250);
    // Nor do the region buffers it keeps until finished: a pipe's reads may be a few bytes
    // each, in a region buffer each.
    size_t kept = 0;
    for (const auto& p : b.pieces) kept += p.region ? region_bytes : 0;
    REQUIRE(kept <= b.input_bytes + 2 * region_bytes);
    REQUIRE(gpbzip2::finish_block(b, scratch) == want[count].crc);
    const std::span<const uint8_t> text = b.text();
    REQUIRE(std::vector<uint8_t>(text.begin(), text.end()) == want[count].data);
    total += b.input_bytes;
    count++;
  }
  REQUIRE(count == want.size());
  REQUIRE(total == in.size());
  REQUIRE(reader.bytes_read() == in.size());
  REQUIRE(reader.at_end());
}

void check_reader(const std::vector<uint8_t>& in, int level) {
  gpbzip2::MemorySource src(in);
  check_reader(in, level, src);
}

// `n` bytes with no two neighbours equal, so no runs: a literal stretch.
std::vector<uint8_t> literal(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = uint8_t('a' + i % 7);
  return v;
}

// Literal stretches of 0..20 bytes and runs of 1..600 bytes (some of the byte that
// came before, which lengthens that run): runs cross the block limit in every way.
std::vector<uint8_t> dense_runs(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v;
  while (v.size() < size) {
    for (size_t k = rng() % 21; k > 0; k--) v.push_back(uint8_t('a' + rng() % 4));
    const uint8_t c = rng() % 3 == 0 && !v.empty() ? v.back() : uint8_t('a' + rng() % 4);
    v.insert(v.end(), 1 + rng() % 600, c);
  }
  v.resize(size);
  return v;
}

}  // namespace

TEST_CASE("block reader cuts and run-length encodes as bzip2 does", "[reader]") {
  std::vector<std::vector<uint8_t>> inputs = {
      {},
      {7},
      std::vector<uint8_t>(255, 'a'),
      std::vector<uint8_t>(256, 'a'),
      std::vector<uint8_t>(100000 * 2 + 3, 'q'),
      gpbzip2::corpus::generate("runs", 350000, 2),
      gpbzip2::corpus::generate("text", 250000, 3),
      gpbzip2::corpus::generate("random", size_t(block_limit(1)), 4),
  };
  for (const auto& in : inputs) {
    testing::PieceSource src(in, 700);
    check_reader(in, 1, src);
  }
}

// A block of zeros stands for 51 times the limit: the reader writes all but the first
// kMostSaved bytes' worth of it encoded, and mixes of runs and literals switch anywhere.
TEST_CASE("block reader holds blocks of long runs encoded", "[reader]") {
  std::vector<uint8_t> in(2 * 51 * size_t(block_limit(1)) + 99, 0);
  for (size_t i = 700000; i < in.size(); i += 100003) in[i] = 1;  // literals among the runs
  for (int scouts : {0, 2, -2}) {  // -2: two scouts beside a reader that reads
    INFO(scouts << " scouts");
    testing::PieceSource src(in, 70000, SIZE_MAX, scouts > 0);
    check_reader(in, 1, src, std::abs(scouts), 65536);
  }
}

// A run does not have to end to be cut into blocks: an endless pipe of zeros gives its
// blocks as it comes, as bzip2 gives them (the reader once read to the end of the run
// first, which for /dev/zero never came).
TEST_CASE("block reader cuts blocks out of a run that has not ended", "[reader]") {
  struct Zeros final : gpbzip2::Source {
    uint64_t given = 0;
    size_t read(uint8_t* buf, size_t n) override {
      if (given >= (uint64_t(64) << 20)) return 0;  // so that a reader that waits ends
      std::fill_n(buf, n, uint8_t(0));
      given += n;
      return n;
    }
  } zeros;
  gpbzip2::BlockReader reader(zeros, 1);
  gpbzip2::RawBlock b;
  gpbzip2::ByteVector scratch;
  // A block at -1 holds 20000 pieces of 255 zeros (five bytes each).
  const uint64_t pieces = (uint64_t(block_limit(1)) + 4) / 5;
  for (int i = 0; i < 3; i++) {
    REQUIRE(reader.next(b));
    REQUIRE(b.input_bytes == 255 * pieces);
    REQUIRE(b.rle_bytes == 5 * pieces);
    gpbzip2::finish_block(b, scratch);
    const std::vector<uint8_t> piece = {0, 0, 0, 0, 251};
    for (uint64_t k = 0; k < pieces; k++)
      REQUIRE(std::equal(piece.begin(), piece.end(), b.text().begin() + ptrdiff_t(5 * k)));
  }
  // Read ahead by a region or two, not to the end of the run.
  REQUIRE(zeros.given <= 3 * 255 * pieces + 3 * gpbzip2::BlockReader::kRegionBytes);
}

// A literal stretch ends `d` bytes before the limit and a run of r bytes follows: the
// block closes after the run, inside it (a long run's next piece), or at the end of the
// short run that crosses the limit. Every r from 1 to 260 at level 1, the lengths around
// 4 and 255 at the other levels.
TEST_CASE("block reader cuts runs of 1 to 260 bytes near the limit as bzip2 does", "[reader]") {
  for (int level = 1; level <= 9; level++) {
    std::vector<size_t> lengths;
    if (level == 1)
      for (size_t r = 1; r <= 260; r++) lengths.push_back(r);
    else
      lengths = {1, 2, 3, 4, 5, 6, 250, 254, 255, 256, 258, 259, 260};
    const size_t limit = size_t(block_limit(level));
    for (size_t d = 0; d <= 7; d++)
      for (size_t r : lengths) {
        INFO("run of " << r << " starting " << d << " bytes before the limit");
        std::vector<uint8_t> in = literal(limit - d);
        in.insert(in.end(), r, uint8_t('z'));
        const auto tail = literal(300);
        in.insert(in.end(), tail.begin(), tail.end());
        check_reader(in, level);
      }
  }
}

TEST_CASE("block reader cuts dense runs as bzip2 does, read from a pipe in tiny pieces",
          "[reader]") {
  for (int level = 1; level <= 9; level++) {
    const auto in = dense_runs(2 * size_t(block_limit(level)) * 20 + 4321, uint32_t(level));
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::thread writer([&] {
      std::mt19937 rng{uint32_t(level)};
      for (size_t pos = 0; pos < in.size();) {
        const size_t k = std::min(in.size() - pos, size_t(1 + rng() % 4096));
        const ssize_t put = write(fds[1], in.data() + pos, k);
        if (put <= 0) break;
        pos += size_t(put);
      }
      close(fds[1]);
    });
    gpbzip2::FdSource src(fds[0]);
    // Scouts searching what the reader reads, as beside a GPU.
    check_reader(in, level, src, level % 2 ? 2 : 0);
    writer.join();
    close(fds[0]);
    testing::PieceSource trickle(in, 13);
    check_reader(in, level, trickle);
  }
}

// The runs are searched region by region, by scouts or by the reader: runs that cross
// regions, regions of one byte, and regions down to one byte long cut alike.
TEST_CASE("block reader cuts alike whatever its regions and scouts", "[reader]") {
  std::vector<std::vector<uint8_t>> inputs = {
      dense_runs(3 * size_t(block_limit(1)) + 777, 7),
      gpbzip2::corpus::generate("runs", 450000, 5),
      std::vector<uint8_t>(4 * size_t(block_limit(1)) + 5, 'q'),
      gpbzip2::corpus::generate("text", 250000, 6),
  };
  // A long run whose pieces and block cuts land on every region boundary.
  inputs.push_back(literal(size_t(block_limit(1)) - 3));
  inputs.back().insert(inputs.back().end(), 100000, uint8_t('z'));
  for (const auto& in : inputs)
    for (size_t region : {size_t(1), size_t(3), size_t(4), size_t(5), size_t(255), size_t(4096),
                          size_t(65536)})
      for (int scouts : {0, 2, -2}) {  // -2: two scouts beside a reader that reads
        INFO("regions of " << region << " bytes, " << scouts << " scouts");
        testing::PieceSource src(in, 700, SIZE_MAX, scouts > 0);
        check_reader(in, 1, src, std::abs(scouts), region);
      }
}

// A read that fails, in a scout's region or the reader's own: the blocks before it come
// out as the model cuts them, then next() throws the source's error.
TEST_CASE("block reader passes a read error on after the blocks before it", "[reader]") {
  const auto in = gpbzip2::corpus::generate("text", 12 * size_t(block_limit(1)), 9);
  const auto want = reference_blocks(in, 1);
  REQUIRE(want.size() >= 10);
  const size_t fail_at = in.size() / 2;
  for (int scouts : {0, 2, -2}) {  // -2: two scouts beside a reader that reads
    INFO(scouts << " scouts");
    testing::PieceSource src(in, 70000, fail_at, scouts > 0);
    gpbzip2::BlockReader reader(src, 1, 4096);
    gpbzip2::RawBlock b;
    size_t count = 0;
    bool thrown = false;
    try {
      while (reader.next(b)) {
        if (count == 0) reader.start_scouts(std::abs(scouts));
        REQUIRE(b.input_bytes == want[count].input_bytes);
        count++;
      }
    } catch (const gpbzip2::Error& e) {
      thrown = true;
      REQUIRE(std::string(e.what()) == "injected read error");
    }
    REQUIRE(thrown);
    // The input fails halfway: the blocks of its first half (less the last, which may
    // reach past the failure) came out, and not all of them.
    REQUIRE(count >= want.size() / 2 - 1);
    REQUIRE(count < want.size());
  }
}

TEST_CASE("block reader passes a scout's failed allocation on, and stops", "[reader]") {
  const auto in = gpbzip2::corpus::generate("text", 12 * size_t(block_limit(1)), 4);
  constexpr size_t kRegion = 4099;  // no other array here has this size
  gpbzip2::MemorySource src(in);
  bool thrown = false;
  size_t count = 0;
  {
    gpbzip2::BlockReader reader(src, 1, kRegion);
    gpbzip2::RawBlock b;
    // Scouts from the start read every region, each into a new buffer (no spares yet),
    // and the first of those fails.
    g_fail_arrays_of = kRegion;
    reader.start_scouts(2);
    try {
      while (reader.next(b)) count++;
    } catch (const std::bad_alloc&) {
      thrown = true;
    }
    g_fail_arrays_of = 0;
  }  // the scouts are joined here
  REQUIRE(thrown);
  REQUIRE(count == 0);
}

// The cuts decide the compressed bytes: whole streams at every level, against libbzip2.
TEST_CASE("streams of runs crossing every block limit equal bzip2's", "[reader]") {
  for (int level = 1; level <= 9; level++) {
    const auto in = dense_runs(size_t(block_limit(level)) * 30, uint32_t(100 + level));
    const bool identical = testing::gp_compress(in, level) == testing::bzip2_reference(in, level);
    INFO("level " << level);
    CHECK(identical);
  }
}
