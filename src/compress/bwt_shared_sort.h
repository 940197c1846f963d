// One block's rotation sort shared between threads: for the last blocks of an input and
// the blocks of a small one, which would otherwise leave the other stations idle while
// one thread sorts each.
#pragma once
#include <cstdint>

#include "team.h"

namespace gpbzip2 {

// The rotations of w[0..n) in order, into sa[0..n); w is not periodic, so they are
// distinct. Each pass is split into tasks for the team: the rotations bucketed by their first
// two bytes, then ordered by their bytes (large ranges by one byte, small ones by 8 at a
// time) up to 66, then by prefix doubling on the ranks where they still tie. Alone it
// takes 1.2-1.4 times libdivsufsort's time on text and binary blocks (measured when that
// was the one-thread sort; the induced sort takes 0.72-0.75 of it). False (sa then holds
// anything) where much of the block repeats (a sampled estimate, before any work), a
// long stretch of a short period turns up, or the doubling runs long (there the one-thread
// sort alone is faster; the more threads, the more repeats it takes on), or where memory
// for it runs out: the caller sorts then.
bool sort_rotations_shared(const uint8_t* w, int32_t n, int32_t* sa, const Team& team);

}  // namespace gpbzip2
