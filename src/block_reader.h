// Cuts the input into blocks exactly where bzip2 does, applying bzip2's first
// run-length encoding (4..255 equal bytes become 4 bytes and a count byte).
#pragma once
#include <cstdint>
#include <vector>

#include "io.h"

namespace gpbzip2 {

struct RawBlock {
  uint64_t index = 0;
  std::vector<uint8_t> data;  // run-length encoded bytes: what the BWT sorts
  uint32_t crc = 0;           // CRC of the original bytes of this block
  uint64_t input_bytes = 0;   // original bytes in this block
};

class BlockReader {
 public:
  BlockReader(Source& src, int level);
  // Fills `out` with the next block; returns false when the input is exhausted.
  bool next(RawBlock& out);
  uint64_t bytes_read() const { return total_in_; }

 private:
  bool refill();

  Source& src_;
  int32_t limit_;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t next_index_ = 0;
  uint64_t total_in_ = 0;
};

}  // namespace gpbzip2
