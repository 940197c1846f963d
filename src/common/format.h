// Constants of the .bz2 format, shared by the encoder and the decoder.
#pragma once
#include <cstdint>

namespace gpbzip2::format {

inline constexpr uint64_t kBlockMagic = 0x314159265359ULL;   // pi, 48 bits
inline constexpr uint64_t kEndMagic = 0x177245385090ULL;     // sqrt(pi), 48 bits
inline constexpr int kMinLevel = 1;
inline constexpr int kMaxLevel = 9;

// bzip2 closes a block once its run-length-encoded size reaches this; the last run
// written may add up to 4 more bytes.
inline constexpr int32_t block_limit(int level) { return 100000 * level - 19; }
inline constexpr int32_t kMaxBlockBytes = 100000 * kMaxLevel;

inline constexpr int kRunA = 0;
inline constexpr int kRunB = 1;
inline constexpr int kMaxAlphaSize = 258;   // 256 MTF values + RUNA/RUNB - 1 + EOB
inline constexpr int kMinGroups = 2;
inline constexpr int kMaxGroups = 6;
inline constexpr int kGroupSize = 50;       // symbols coded with one selector
inline constexpr int kMaxSelectors = 18002; // 2 + 900000 / kGroupSize
inline constexpr int kMaxCodeLen = 20;      // what a decoder accepts
inline constexpr int kEncodeCodeLen = 17;   // what bzip2 1.0.x writes
inline constexpr int kTableIterations = 4;

}  // namespace gpbzip2::format
