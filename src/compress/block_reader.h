// Cuts the input into blocks exactly where bzip2 does. The reader only finds the cuts
// (counting the size of bzip2's first run-length encoding, which restarts at every
// block); the stations encode their own blocks in parallel (block_text).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "common/io.h"

namespace gpbzip2 {

// Bytes whose growth leaves the new bytes unwritten: a recycled buffer is neither zeroed
// nor faulted in again, and a small input touches only the pages it fills.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  // A moved-from buffer is empty: it has no memory, so it claims no capacity (a buffer
  // recycled twice once handed out a null pointer with a capacity).
  ByteBuffer(ByteBuffer&& o) noexcept : p_(std::move(o.p_)), cap_(std::exchange(o.cap_, 0)) {}
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    p_ = std::move(o.p_);
    cap_ = std::exchange(o.cap_, 0);
    return *this;
  }
  uint8_t* data() { return p_.get(); }
  const uint8_t* data() const { return p_.get(); }
  size_t capacity() const { return cap_; }
  bool empty() const { return cap_ == 0; }
  // At least n bytes; the first `keep` survive a move to new memory.
  void reserve(size_t n, size_t keep = 0);

 private:
  std::unique_ptr<uint8_t[]> p_;
  size_t cap_ = 0;
};

struct RawBlock {
  uint64_t index = 0;
  ByteBuffer buffer;         // holds the block's input: buffer[0, input_bytes)
  uint64_t input_bytes = 0;  // original bytes in this block
  size_t rle_bytes = 0;      // its size after the first RLE: what the BWT sorts
  bool has_runs = false;     // holds four equal bytes in a row, so the RLE changes it
  std::span<const uint8_t> input() const { return {buffer.data(), size_t(input_bytes)}; }
};

class BlockReader {
 public:
  BlockReader(Source& src, int level);
  // Reads the next block into out.buffer (reusing its memory); returns false when the
  // input is exhausted.
  bool next(RawBlock& out);
  // Input bytes cut into blocks so far, and their size after the first RLE.
  uint64_t bytes_read() const { return consumed_; }
  uint64_t rle_bytes_read() const { return rle_consumed_; }
  // True once the input is known to be exhausted: no block follows. (False does not
  // promise one: the input may end just where a block filled.)
  bool at_end() const { return eof_ && carry_.empty(); }

 private:
  Source& src_;
  int32_t limit_;
  std::vector<uint8_t> carry_;  // read past the last cut: the next block's first bytes
  bool eof_ = false;
  uint64_t next_index_ = 0;
  uint64_t consumed_ = 0, rle_consumed_ = 0;
};

// What the BWT sorts: the block's input after bzip2's first run-length encoding (runs of
// 4..255 equal bytes become four of them and a count of the rest), written to `rle`; or
// the input itself, uncopied, where it has no run of four.
std::span<const uint8_t> block_text(const RawBlock& b, ByteBuffer& rle);

// The block CRC: of the original bytes, which the block holds.
uint32_t block_crc(const RawBlock& b);

}  // namespace gpbzip2
