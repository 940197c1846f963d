#include "cpu_station.h"

namespace gpbzip2 {

CodedBlock BlockCompressor::compress(Job& job) {
  const RawBlock& raw = job.raw;
  if (!job.sorted) bwt_forward(raw.data.data(), int32_t(raw.data.size()), bwt, sorted);
  const BwtResult& s = job.sorted ? *job.sorted : sorted;
  // A randomised block's bytes are flipped: its CRC was taken before.
  const uint32_t crc = raw.randomised ? raw.crc : block_crc(raw.data.data(), raw.data.size());
  BitWriter bw;  // encode_block sizes it for the block's data
  encode_block(s.last.data(), int32_t(raw.data.size()), s.orig_ptr, crc, raw.randomised, enc, bw);
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
      queue.deliver(compressor.compress(*job));
      queue.recycle(std::move(job->raw.data));
    }
  } catch (...) {
    queue.abort(std::current_exception());
  }
}

}  // namespace gpbzip2
