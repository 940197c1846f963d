// Decoding of one .bz2 block: header, Huffman tables, selectors, MTF and RUNA/RUNB into
// the BWT vector, then the inverse BWT and the inverse initial run-length coding, which
// are produced in pieces so that blocks that expand a lot need no large buffer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "format.h"

namespace gpbzip2 {

class BlockDecoder {
 public:
  enum class Status { Ok, Corrupt, OutOfInput };

  BlockDecoder();

  // Decodes the block whose 48-bit magic starts at bit `bit` of data[0, size); 8 zero
  // bytes must be readable past size. OutOfInput: the block needs bits past size.
  // Accepts blocks of up to 900000 bytes; the caller checks the stream's level.
  Status decode(const uint8_t* data, size_t size, uint64_t bit);
  // Why the last decode() said Corrupt.
  const char* why() const { return why_; }
  uint64_t end_bit() const { return end_bit_; }       // first bit after the block
  uint32_t stored_crc() const { return stored_crc_; }
  uint32_t block_bytes() const { return nblock_; }    // BWT length, what the level bounds

  // Output of the last decoded block: restart_output(), then read() until it returns 0;
  // crc() is then the CRC of everything read. May be repeated.
  void restart_output();
  size_t read(uint8_t* buf, size_t cap);
  uint32_t crc() const { return ~crc_; }

 private:
  Status fail(const char* why) {
    why_ = why;
    return Status::Corrupt;
  }
  size_t read_plain(uint8_t* buf, size_t cap);
  size_t read_randomised(uint8_t* buf, size_t cap);

  // tt_[i]: low 8 bits the i-th BWT byte, high 24 bits the link of the inverse BWT.
  std::vector<uint32_t> tt_;
  uint32_t nblock_ = 0;
  uint32_t orig_ptr_ = 0;
  bool randomised_ = false;
  uint32_t stored_crc_ = 0;
  uint64_t end_bit_ = 0;
  const char* why_ = "";

  // Output state: position in the BWT cycle, bytes left, the initial-RLE run so far.
  uint32_t pos_ = 0;
  uint32_t left_ = 0;
  uint32_t run_ = 0;
  uint8_t last_ = 0;
  uint32_t repeat_ = 0;  // copies of last_ still to write
  uint32_t crc_ = 0;
  uint32_t rand_left_ = 0;
  uint32_t rand_index_ = 0;
};

}  // namespace gpbzip2
