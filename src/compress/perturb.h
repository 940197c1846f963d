// --perturb: a block whose rotation sort would go deep (rotations sharing long prefixes)
// is written as one of bzip2's randomised blocks. The low bit of about one byte in 540 is
// flipped where bzip2's table says (the decoder flips them back), so that repeats longer
// than a few hundred bytes no longer make equal prefixes: the GPU's prefix doubling needs
// fewer rounds. Costs a little size; the file is no longer bzip2's bytes.
#pragma once
#include <cstddef>
#include <cstdint>


namespace gpbzip2 {

// A block is deep when the estimate below reaches this. The GPU sorts 5 bytes at first
// (more where the batch's alphabet is small) and doubles that each round, so a longest
// common prefix of 5 * 2^k bytes takes k + 1 rounds: silesia's blocks take at most 13
// (LCP under 40960), the hard inputs 15 to 18, and a few blocks of a Linux source tar 14.
// The estimate runs up to a quarter under the exact prefix, so this catches the blocks of
// 14 rounds and more (bench/README.md).
inline constexpr uint32_t kDeepPrefix = 32768;

// The longest repeat in block[0..n) as a sample sees it: the block is cut into chunks at
// content-defined anchors (about one position in 256), and the answer is the longest run
// of whole chunks that occurs twice, or the longest chunk. About the longest common prefix
// of neighbouring sorted rotations, a chunk or two under it; for measurements and tests.
uint32_t estimate_longest_repeat(const uint8_t* block, size_t n);

// Whether that estimate reaches kDeepPrefix (one probe instead of a bisection).
bool sort_would_be_deep(const uint8_t* block, size_t n);

// The longest stretch where block[i] == block[i + d] for d a multiple of the flips'
// period (278,212 bytes): bytes that far apart get the same flips, so such a repeat stays
// whole in a randomised block.
uint32_t longest_flip_aligned_repeat(const uint8_t* block, size_t n);

// The rule: the block is not one the CPU orders from its period anyway (bwt.h's
// orders_by_period, a pattern of up to 4 kB repeated: a few ms as it is, a full sort
// perturbed; asked first, as it searches 4 kB where the estimate reads the block), it is
// deep, and the flips would break its long repeats.
bool worth_perturbing(const uint8_t* block, size_t n);

// The hook between the first run-length coding and the sort (once the CRC is taken):
// flips the block's bytes into a randomised block's (flip_randomised_bits) where the
// rule says so. Returns whether it did.
bool perturb_if_deep(uint8_t* block, size_t n);

}  // namespace gpbzip2
