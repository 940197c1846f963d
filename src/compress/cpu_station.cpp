#include "cpu_station.h"

namespace gpbzip2 {
namespace {

// Makes a job sortable by a GPU: its CRC, and its run-length coding into a buffer of its
// own, so that the larger input buffer goes back to the reader at once.
void prepare(Job& job, WorkQueue& queue) {
  job.crc = block_crc(job.raw);
  if (job.raw.has_runs) {
    job.rle = queue.spare_buffer();
    block_text(job.raw, job.rle);
    queue.recycle(std::move(job.raw.buffer));
  }
  job.prepared = true;
}

}  // namespace

CodedBlock BlockCompressor::compress(Job& job) {
  const RawBlock& raw = job.raw;
  const uint32_t crc = job.prepared ? job.crc : block_crc(raw);
  const std::span<const uint8_t> text = job.prepared ? job.text() : block_text(raw, rle);
  if (!job.sorted) bwt_forward(text.data(), int32_t(text.size()), bwt, sorted);
  const BwtResult& s = job.sorted ? *job.sorted : sorted;
  BitWriter bw;  // encode_block sizes it for the block's data
  encode_block(s.last.data(), int32_t(text.size()), s.orig_ptr, crc, enc, bw);
  CodedBlock out;
  out.index = raw.index;
  out.nbits = bw.bit_count();
  out.bits = std::move(bw.finish());
  out.crc = crc;
  out.input_bytes = raw.input_bytes;
  return out;
}

void run_cpu_station(WorkQueue& queue) {
  BlockCompressor compressor;
  try {
    while (auto job = queue.pop_for_cpu()) {
      if (job->prepare_only) {
        prepare(*job, queue);
        queue.prepared(std::move(*job));
        continue;
      }
      queue.deliver(compressor.compress(*job));
      queue.recycle(std::move(job->raw.buffer));
      queue.recycle(std::move(job->rle));
    }
  } catch (...) {
    queue.abort(std::current_exception());
  }
}

}  // namespace gpbzip2
