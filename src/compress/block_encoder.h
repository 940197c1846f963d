// Second half of bzip2's block compression: move-to-front, zero-run coding, Huffman
// table selection and the bit layout of one block.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "team.h"
#include "common/bit_writer.h"

namespace gpbzip2 {

// Room for a block's symbols (one per byte at most, and the end of block) and past them
// for whole-word stores of zero-run digits.
inline constexpr size_t kSymbolPad = 8;
inline constexpr size_t symbol_capacity(int32_t n) { return size_t(n) + 1 + kSymbolPad; }

struct EncoderWorkspace {
  // symbol_capacity(n) entries, the caller's: a CPU station lends the memory of its sort
  // (BwtWorkspace::spare), free once the last column is out, or for a block sorted
  // elsewhere an array of its own.
  uint16_t* symbols = nullptr;
  std::vector<uint8_t> selectors;
};

// Appends one complete block (magic, CRC, origPtr, tables, data) to `out`.
// `last` is the BWT last column of the run-length encoded block (of its randomised form
// where `randomised`: the header says so). Given `team` (a block whose sort was shared),
// the move to front and the choice of tables are cut into tasks for it too; the bits are
// the same.
void encode_block(const uint8_t* last, int32_t n, uint32_t orig_ptr, uint32_t block_crc,
                  bool randomised, EncoderWorkspace& ws, BitWriter& out,
                  const Team* team = nullptr);

// The same from the MTF positions of the last column's bytes (where the GPU moved it to
// front) and the 256 flags of the bytes in use. Throws Internal where a position is not
// below the count of bytes in use: a bad result is not written out.
void encode_mtf_block(const uint8_t* positions, int32_t n, const bool* in_use, uint32_t orig_ptr,
                      uint32_t block_crc, bool randomised, EncoderWorkspace& ws, BitWriter& out);

}  // namespace gpbzip2
