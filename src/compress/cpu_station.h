// A CPU compute station: a thread that turns jobs into coded blocks until the queue
// runs dry.
#pragma once
#include "block_encoder.h"
#include "common/huge_pages.h"
#include "work_queue.h"

namespace gpbzip2 {

// Compresses one block whole (CRC if not yet prepared, BWT if not yet sorted, then
// entropy coding).
struct BlockCompressor {
  bool perturb = false;  // --perturb: deep blocks written randomised (perturb.h)
  ByteVector scratch;    // finish_block's, for jobs not yet prepared
  // The station holds one of the two: the sort's arrays (whose spare room takes the
  // symbols) while it sorts, a symbol array alone while it codes blocks a GPU sorted:
  // 2 MB a station where both would hold 8.
  BwtWorkspace bwt;
  HugePageVector<uint16_t> symbols;
  EncoderWorkspace enc;
  // `run` hands out the tasks of a job's sort where the queue shares it (share_threads).
  CodedBlock compress(Job& job, const RunTogether* run = nullptr);
  // Frees the arrays kept for the next block.
  void release();
};

void run_cpu_station(WorkQueue& queue, bool perturb);

}  // namespace gpbzip2
