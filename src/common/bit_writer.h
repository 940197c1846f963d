// MSB-first bit packing, as .bz2 stores every field.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gpbzip2 {

class BitWriter {
 public:
  // Appends the low `n` bits of `v` (n <= 32), most significant first.
  void put(int n, uint32_t v) {
    acc_ = (acc_ << n) | (v & ((uint64_t(1) << n) - 1));
    nacc_ += n;
    if (nacc_ >= 32) {
      nacc_ -= 32;
      uint32_t w = uint32_t(acc_ >> nacc_);
      bytes_.push_back(uint8_t(w >> 24));
      bytes_.push_back(uint8_t(w >> 16));
      bytes_.push_back(uint8_t(w >> 8));
      bytes_.push_back(uint8_t(w));
    }
  }
  void put48(uint64_t v) {
    put(24, uint32_t(v >> 24));
    put(24, uint32_t(v));
  }
  // Appends `nbits` bits stored MSB-first in `src`.
  void append(const uint8_t* src, uint64_t nbits) {
    uint64_t whole = nbits / 32;
    for (uint64_t i = 0; i < whole; i++, src += 4)
      put(32, uint32_t(src[0]) << 24 | uint32_t(src[1]) << 16 | uint32_t(src[2]) << 8 | src[3]);
    for (int rest = int(nbits % 32); rest > 0; rest -= 8, src++)
      put(rest >= 8 ? 8 : rest, rest >= 8 ? *src : *src >> (8 - rest));
  }
  uint64_t bit_count() const { return uint64_t(bytes_.size()) * 8 + nacc_; }
  // Moves out complete bytes, keeping the pending partial bits.
  void take_whole_bytes(std::vector<uint8_t>& out) {
    while (nacc_ >= 8) {
      nacc_ -= 8;
      bytes_.push_back(uint8_t(acc_ >> nacc_));
    }
    out.swap(bytes_);
    bytes_.clear();
  }
  // Pads the last byte with zero bits and returns all bytes.
  std::vector<uint8_t>& finish() {
    while (nacc_ >= 8) {
      nacc_ -= 8;
      bytes_.push_back(uint8_t(acc_ >> nacc_));
    }
    if (nacc_ > 0) bytes_.push_back(uint8_t(acc_ << (8 - nacc_)));
    nacc_ = 0;
    acc_ = 0;
    return bytes_;
  }
  void reserve(size_t n) { bytes_.reserve(n); }

  // Puts many codes fast, for the data of a block. The state lives in locals, which byte
  // stores cannot alias (members would go through memory on every put), and each put
  // stores eight bytes unconditionally instead of testing for a full word. At most
  // `max_bits` bits go through one Burst, and the writer waits until it is destroyed.
  class Burst {
   public:
    Burst(BitWriter& w, uint64_t max_bits) : w_(w), acc_(w.acc_), nacc_(w.nacc_) {
      const size_t used = w.bytes_.size();
      w.bytes_.resize(used + (size_t(nacc_) + max_bits) / 8 + 8);
      p_ = w.bytes_.data() + used;
      flush_whole_bytes();  // so that puts start with at most 7 bits pending
    }
    ~Burst() {
      flush_whole_bytes();
      w_.bytes_.resize(size_t(p_ - w_.bytes_.data()));
      w_.acc_ = acc_;
      w_.nacc_ = nacc_;
    }
    // Appends the `n` bits of `v`: 1 <= n <= 56 and v < 2^n (with at most 7 bits
    // pending, they fit the 64-bit accumulator).
    void put(int n, uint64_t v) {
      acc_ = (acc_ << n) | v;
      nacc_ += n;
      uint64_t top = acc_ << (64 - nacc_);  // pending bits from bit 63 down
      if constexpr (std::endian::native == std::endian::little) top = __builtin_bswap64(top);
      std::memcpy(p_, &top, 8);
      p_ += nacc_ >> 3;
      nacc_ &= 7;
    }

   private:
    void flush_whole_bytes() {
      while (nacc_ >= 8) {
        nacc_ -= 8;
        *p_++ = uint8_t(acc_ >> nacc_);
      }
    }
    BitWriter& w_;
    uint64_t acc_;
    int nacc_;
    uint8_t* p_;
  };

 private:
  std::vector<uint8_t> bytes_;
  uint64_t acc_ = 0;
  int nacc_ = 0;
};

}  // namespace gpbzip2
