// Burrows-Wheeler transform of cyclic rotations, ordered as bzip2 orders them.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "common/huge_pages.h"
#include "suffix_array.h"
#include "team.h"

namespace gpbzip2 {

struct BwtResult {
  std::vector<uint8_t> last;  // last column of the sorted rotation matrix
  uint32_t orig_ptr = 0;      // sorted position of the rotation that starts at 0
  // Where the GPU also did the move-to-front step (moved_to_front): `last` is left empty,
  // `mtf` holds each of its bytes' positions in bzip2's list, and `in_use` (set only then)
  // the bytes the block has. Where the caller's BlockView::result took the column or the
  // positions, both vectors are empty.
  bool moved_to_front = false;
  std::vector<uint8_t> mtf;
  std::array<bool, 256> in_use{};
};

// Scratch memory reused from block to block by one thread, as bzip2 reuses its arrays:
// `sa` holds the sorted rotations (4 bytes each), then the last column in
// its first n bytes, and the caller may code the block's symbols after that (`spare`):
// one array for three stages, since every thread holds one (6n bytes a thread with the
// text and the run-length coding, where an array per stage took 10n). The block turned
// to its least rotation follows in the same array; a periodic block's text is in `text`.
// The suffix sort keeps about 2n bytes of its own (`suffixes`).
struct BwtWorkspace {
  HugePageVector<uint8_t> sa;
  HugePageVector<uint8_t> text;
  std::vector<int32_t> aux;
  SuffixArrayWorkspace suffixes;
  // Room for n + kSpareExtra 16-bit values after the last column of a block of n bytes,
  // which stays where the sort left it.
  static constexpr size_t kSpareExtra = 16;
  uint16_t* spare(int32_t n);
};

// The sort's result in the workspace: the last column of the sorted rotation matrix and
// the sorted position of the rotation that starts at 0; valid until the workspace sorts
// again.
struct BwtView {
  const uint8_t* last;
  uint32_t orig_ptr;
};

// Sorts the rotations of block[0..n). Equal rotations (a periodic block such as "ab"
// repeated) are ordered as bzip2 orders them, so origPtr matches too. Given `team`, the
// sort of a block that is not periodic is shared out through it where it pays
// (bwt_shared_sort.h); the result is the same.
BwtView bwt_forward(const uint8_t* block, int32_t n, BwtWorkspace& ws,
                    const Team* team = nullptr);

// Whether bwt_forward orders block[0..n) from its period, without sorting (a pattern
// repeated and cut at a length it does not divide): a search of the first 4 kB and at most
// one pass over the block.
bool orders_by_period(const uint8_t* block, int32_t n);

// The same, copied out (tests and the GPU station's comparisons).
void bwt_forward(const uint8_t* block, int32_t n, BwtWorkspace& ws, BwtResult& out);

}  // namespace gpbzip2
