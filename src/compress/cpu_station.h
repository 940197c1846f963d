// A CPU compute station: a thread that turns jobs into coded blocks until the queue
// runs dry.
#pragma once
#include "block_encoder.h"
#include "work_queue.h"

namespace gpbzip2 {

// Compresses one block whole (run-length coding and CRC if not yet prepared, BWT if not
// yet sorted, then entropy coding).
struct BlockCompressor {
  bool perturb = false;  // --perturb: deep blocks written randomised (perturb.h)
  ByteBuffer rle;
  BwtWorkspace bwt;
  EncoderWorkspace enc;
  CodedBlock compress(Job& job);
};

void run_cpu_station(WorkQueue& queue, bool perturb);

}  // namespace gpbzip2
