// Suffix array of a byte string by induced sorting (SA-IS: Nong, Zhang and Chan, 2009).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace gpbzip2 {

// Scratch kept from block to block by one thread, beside the suffix array: each level of
// the recursion's bucket starts and LMS positions (a bit each, with counts a word), the
// buckets' moving ends, and for prefix doubling its groups, its keys where the suffix
// array has no room for them, and where groups start when it gives up.
struct SuffixArrayWorkspace {
  struct Level {
    std::vector<int32_t> start;
    std::vector<uint64_t> lms;       // bit p: p is an LMS position
    std::vector<int32_t> lms_before;  // LMS positions in the words before each
  };
  std::vector<Level> levels;
  std::vector<int32_t> bucket;
  std::vector<uint64_t> group_starts;
  std::vector<int32_t> group_starts_before, keys;
  std::vector<std::pair<int32_t, int32_t>> groups, next_groups, members;
};

// sa[0..n) = the suffixes of t[0..n) in order, a suffix before every longer one it is a
// prefix of: the same array as libdivsufsort's.
void suffix_array(const uint8_t* t, int32_t n, int32_t* sa, SuffixArrayWorkspace& ws);

}  // namespace gpbzip2
