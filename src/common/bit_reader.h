// MSB-first bit reading over a buffer in memory, as .bz2 stores every field.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpbzip2 {

inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

// Reads data[0, size), which must be followed by 8 readable bytes (zeros). Past the end
// it reads zeros, so every decoding loop still ends; the caller asks overran() after.
class BitReader {
 public:
  BitReader(const uint8_t* data, size_t size, uint64_t bit) : data_(data), size_(size) {
    pos_ = size_t(bit / 8);
    if (pos_ > size_ + 1) pos_ = size_ + 1;  // already past the end: zeros from here
    refill();
    skip(int(bit % 8));
  }

  // Leaves at least 56 bits buffered.
  void refill() {
    if (pos_ <= size_) buf_ |= load_be64(data_ + pos_) >> count_;
    pos_ += size_t(63 - count_) >> 3;
    count_ |= 56;
  }
  // The next n bits (1 <= n <= 32) without consuming them; needs n <= buffered().
  uint32_t peek(int n) const { return uint32_t(buf_ >> (64 - n)); }
  void skip(int n) {
    buf_ <<= n;
    count_ -= n;
  }
  int buffered() const { return count_; }
  // Reads n bits, 1 <= n <= 32.
  uint32_t get(int n) {
    if (count_ < n) refill();
    uint32_t v = peek(n);
    skip(n);
    return v;
  }
  uint64_t bit_position() const { return uint64_t(pos_) * 8 - uint64_t(count_); }
  bool overran() const { return bit_position() > uint64_t(size_) * 8; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_;
  uint64_t buf_ = 0;
  int count_ = 0;
};

}  // namespace gpbzip2
