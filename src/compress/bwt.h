// Burrows-Wheeler transform of cyclic rotations, ordered as bzip2 orders them.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "common/huge_pages.h"

namespace gpbzip2 {

struct BwtResult {
  std::vector<uint8_t> last;  // last column of the sorted rotation matrix
  uint32_t orig_ptr = 0;      // sorted position of the rotation that starts at 0
  // Where the GPU also did the move-to-front step: `last` is left empty, `mtf` holds each
  // of its bytes' positions in bzip2's list, and `in_use` the bytes the block has.
  std::vector<uint8_t> mtf;
  std::array<bool, 256> in_use{};
};

// Scratch memory reused from block to block by one thread.
struct BwtWorkspace {
  HugePageVector<uint8_t> text;  // the last byte, then the block twice: any rotation is contiguous
  HugePageVector<int32_t> sa;
  std::vector<int32_t> aux;
};

// Sorts the rotations of block[0..n). Equal rotations (a periodic block such as "ab"
// repeated) are ordered as bzip2 orders them, so origPtr matches too.
void bwt_forward(const uint8_t* block, int32_t n, BwtWorkspace& ws, BwtResult& out);

}  // namespace gpbzip2
