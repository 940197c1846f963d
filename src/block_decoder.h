// Decoding of one .bz2 block: header, Huffman tables, selectors, MTF and RUNA/RUNB into
// the BWT vector, and the inverse BWT. The inverse of the initial run-length coding is
// RunExpander, which produces the output in pieces so that blocks that expand a lot need
// no large buffer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "format.h"

namespace gpbzip2 {

class BlockDecoder {
 public:
  enum class Status { Ok, Corrupt, OutOfInput };
  static constexpr size_t kTtWords = size_t(format::kMaxBlockBytes);

  BlockDecoder();
  BlockDecoder(const BlockDecoder&) = delete;
  BlockDecoder& operator=(const BlockDecoder&) = delete;

  // Decodes the block whose 48-bit magic starts at bit `bit` of data[0, size); 8 zero
  // bytes must be readable past size. OutOfInput: the block needs bits past size.
  // Accepts blocks of up to 900000 bytes; the caller checks the stream's level.
  Status decode(const uint8_t* data, size_t size, uint64_t bit);
  // decode() in two steps, so that the inverse BWT of two blocks can run together:
  // decode_symbols(), then invert_bwt() or invert_bwt_pair() when it said Ok.
  Status decode_symbols(const uint8_t* data, size_t size, uint64_t bit);
  void invert_bwt();
  static void invert_bwt_pair(BlockDecoder& a, BlockDecoder& b);
  // Why the last decode() said Corrupt.
  const char* why() const { return why_; }
  uint64_t end_bit() const { return end_bit_; }  // first bit after the block
  uint32_t stored_crc() const { return stored_crc_; }
  uint32_t block_bytes() const { return nblock_; }  // BWT length, what the level bounds
  // The block before the initial run-length coding is undone: the inverse BWT.
  const std::vector<uint8_t>& text() const { return text_; }
  std::vector<uint8_t> take_text();

 private:
  Status fail(const char* why) {
    why_ = why;
    return Status::Corrupt;
  }
  void link_rows();
  void walk(uint32_t from, uint32_t to);
  void finish_walk();

  struct Free {
    void operator()(uint32_t* p) const;
  };
  // tt_[0, kTtWords): the BWT vector, then the links of the inverse BWT; LF after it.
  // On huge pages where the system allows: the inverse BWT visits both in random order.
  std::unique_ptr<uint32_t[], Free> tt_;
  std::vector<uint8_t> text_;
  uint32_t freq_[256];  // occurrences of each byte in the BWT vector
  uint32_t nblock_ = 0;
  uint32_t orig_ptr_ = 0;
  bool randomised_ = false;
  uint32_t stored_crc_ = 0;
  uint64_t end_bit_ = 0;
  const char* why_ = "";
  uint32_t fwd_ = 0, back_ = 0;  // rows the two chains of the inverse BWT have reached
};

// Undoes the initial run-length coding of a block's text (4 equal bytes, then a count of
// further copies), piece by piece, and computes the block CRC on the way.
class RunExpander {
 public:
  RunExpander(const uint8_t* text, size_t size) : p_(text), end_(text + size) {}
  // Up to cap bytes of output; 0 at the end.
  size_t read(uint8_t* buf, size_t cap);
  uint32_t crc() const { return ~crc_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  uint32_t run_ = 0;
  uint8_t last_ = 0;
  uint32_t repeat_ = 0;  // copies of last_ still to write
  uint32_t crc_ = ~0u;
};

}  // namespace gpbzip2
