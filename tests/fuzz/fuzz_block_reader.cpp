// Block reader against a byte-at-a-time model of bzip2's input stage (ADD_CHAR_TO_BLOCK
// and the block-full test in handle_compress): the same blocks, run-length bytes, CRCs
// and byte counts, whatever the data and however the source splits its reads.
#include <algorithm>
#include <array>

#include "compress/block_reader.h"
#include "common/format.h"
#include "fuzz_common.h"

namespace {

struct ModelBlock {
  std::vector<uint8_t> data;
  uint32_t crc = 0;
  uint64_t input_bytes = 0;
  bool has_runs = false;  // a run of four or more written with a count
};

// CRC-32 with bzip2's polynomial, MSB first, written independently of src/common/crc32.
uint32_t crc_step(uint32_t crc, uint8_t b) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i << 24;
      for (int k = 0; k < 8; k++) c = (c & 0x80000000u) ? (c << 1) ^ 0x04c11db7u : c << 1;
      t[i] = c;
    }
    return t;
  }();
  return (crc << 8) ^ table[(crc >> 24) ^ b];
}

std::vector<ModelBlock> model_blocks(const std::vector<uint8_t>& in, int level) {
  const size_t limit = size_t(gpbzip2::format::block_limit(level));
  std::vector<ModelBlock> blocks;
  ModelBlock cur;
  uint32_t crc = 0xffffffffu;
  int ch = 256, len = 0;
  auto flush_run = [&] {
    for (int k = 0; k < len; k++) crc = crc_step(crc, uint8_t(ch));
    cur.input_bytes += uint64_t(len);
    cur.data.insert(cur.data.end(), size_t(std::min(len, 4)), uint8_t(ch));
    if (len >= 4) {
      cur.data.push_back(uint8_t(len - 4));
      cur.has_runs = true;
    }
  };
  auto close_block = [&] {
    cur.crc = ~crc;
    blocks.push_back(std::move(cur));
    cur = ModelBlock{};
    crc = 0xffffffffu;
  };
  for (uint8_t b : in) {
    if (b == ch && len < 255) {
      len++;
    } else {
      if (ch < 256) flush_run();
      ch = b;
      len = 1;
      // The run just written may fill the block; the new byte's run carries over.
      if (cur.data.size() >= limit) close_block();
    }
  }
  if (ch < 256) flush_run();
  if (!cur.data.empty()) close_block();
  return blocks;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int level = 1 + data[0] % 9;
  const std::vector<uint8_t> in = fuzz::expand(data + 2, size - 2, size_t(2) << 20);
  const auto want = model_blocks(in, level);

  fuzz::ChunkedSource src(in, data[1]);
  gpbzip2::BlockReader reader(src, level);
  gpbzip2::RawBlock got;
  gpbzip2::ByteVector scratch;
  size_t i = 0;
  while (reader.next(got)) {
    fuzz::check(i < want.size(), "more blocks than bzip2");
    fuzz::check(got.index == i, "block index");
    fuzz::check(got.input_bytes == want[i].input_bytes, "block input byte count");
    fuzz::check(got.rle_bytes == want[i].data.size(), "block size counted by the reader");
    fuzz::check(gpbzip2::finish_block(got, scratch) == want[i].crc, "block CRC");
    const std::span<const uint8_t> text = got.text();
    fuzz::check(std::equal(text.begin(), text.end(), want[i].data.begin(), want[i].data.end()),
                "block bytes differ from bzip2's");
    fuzz::check(got.has_runs == want[i].has_runs, "whether the block has runs");
    fuzz::check(got.rle_bytes <= size_t(gpbzip2::format::block_limit(level)) + 4,
                "block longer than the limit allows");
    i++;
  }
  fuzz::check(i == want.size(), "fewer blocks than bzip2");
  fuzz::check(reader.bytes_read() == in.size(), "bytes_read");
  fuzz::check(!reader.next(got), "next() after the end");
  return 0;
}
