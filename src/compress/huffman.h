// Huffman code construction exactly as bzip2 1.0.x builds it, so that tables match bit
// for bit.
#pragma once
#include <cstdint>

namespace gpbzip2 {

// Code lengths for freq[0..alpha) limited to max_len. A zero frequency counts as one;
// when a code is too long all frequencies are halved (plus one) and the tree rebuilt.
void make_code_lengths(uint8_t* len, const int32_t* freq, int alpha, int max_len);

// Canonical codes: by length, then by symbol.
void assign_codes(uint32_t* code, const uint8_t* len, int alpha);

}  // namespace gpbzip2
