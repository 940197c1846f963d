// The CRC of .bz2 blocks and streams: CRC-32 with polynomial 0x04C11DB7, MSB first.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace gpbzip2 {

struct Crc32Tables {
  std::array<std::array<uint32_t, 256>, 16> t;
};
extern const Crc32Tables kCrc32;

// Running CRC state: start at ~0, feed bytes, finish with ~. Long buffers go by
// carry-less multiplication where the CPU has it.
uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n);
// The same by table lookups alone (slicing by 16), for any CPU.
uint32_t crc32_update_tables(uint32_t crc, const uint8_t* p, size_t n);

// The same through `count` copies of `byte`: a few multiplications where the CPU has
// carry-less ones, whatever the count.
uint32_t crc32_run(uint32_t crc, uint8_t byte, size_t count);

inline uint32_t crc32_byte(uint32_t crc, uint8_t b) {
  return (crc << 8) ^ kCrc32.t[0][(crc >> 24) ^ b];
}

// The stream CRC folds in each block CRC in order.
inline uint32_t combine_stream_crc(uint32_t stream, uint32_t block) {
  return ((stream << 1) | (stream >> 31)) ^ block;
}

}  // namespace gpbzip2
