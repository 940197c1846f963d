// Cuts the input into blocks exactly where bzip2 does, applying bzip2's first
// run-length encoding (4..255 equal bytes become 4 bytes and a count byte).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "common/io.h"

namespace gpbzip2 {

struct RawBlock {
  uint64_t index = 0;
  std::vector<uint8_t> data;  // run-length encoded bytes: what the BWT sorts
  uint64_t input_bytes = 0;   // original bytes in this block
  // Set by perturb_if_deep: data holds bzip2's randomised form of the block, and crc the
  // CRC of the original bytes, taken before the flips.
  bool randomised = false;
  uint32_t crc = 0;
};

class BlockReader {
 public:
  BlockReader(Source& src, int level);
  // Fills `out` with the next block, in the buffer out.data already has if it has one;
  // returns false when the input is exhausted.
  bool next(RawBlock& out);
  // Input bytes consumed into blocks so far.
  uint64_t bytes_read() const { return consumed_; }
  // True once the input is known to be exhausted: no block follows. (False does not
  // promise one: the input may end just where a block filled.)
  bool at_end() const { return eof_ && pos_ == end_; }

 private:
  void fill_lookahead();

  Source& src_;
  int32_t limit_;
  std::unique_ptr<uint8_t[]> buf_;  // left unwritten: a small input touches a page of it
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t next_index_ = 0;
  uint64_t consumed_ = 0;
};

// CRC of the original bytes a run-length encoded block stands for. The reader leaves it
// to the stations so that one thread can feed many.
uint32_t block_crc(const uint8_t* rle, size_t n);

}  // namespace gpbzip2
