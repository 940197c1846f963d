// A CPU decode station: a thread that decodes blocks from the queue until it stops,
// inverting their BWT itself unless a GPU station wants them, and finishing those the
// GPU gives back.
#pragma once
#include "decode_queue.h"

namespace gpbzip2 {

void run_decode_station(DecodeQueue& queue, PagePool& pages);

// A block decoded whole on the calling thread, for the checker's own retries.
void decode_here(DecodeTask& t, BlockDecoder& dec, PagePool& pages, uint8_t* scratch);

}  // namespace gpbzip2
