// Finds where blocks may start: the 48-bit block and end-of-stream magics at any bit
// offset. Compressed data can contain them by chance, so a hit is only a candidate.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpbzip2 {

struct MagicHit {
  uint64_t bit;        // offset of the magic's first bit from data[0]
  bool end_of_stream;  // the end-of-stream magic rather than a block magic
};

// Appends, in order, every hit starting in bytes [from, to) of data[0, size) whose 48
// bits lie inside data[0, size).
void scan_for_magic(const uint8_t* data, size_t size, size_t from, size_t to,
                    std::vector<MagicHit>& hits);

}  // namespace gpbzip2
