#include "cpu_station.h"

#include <optional>

#include "perturb.h"

namespace gpbzip2 {
namespace {

// The block's CRC (of its original bytes), then what the sort takes: its run-length
// coding into `rle`, or the input itself where it has no run; with --perturb, flipped
// into a randomised block where the rule says (perturb.h).
std::span<const uint8_t> ready(Job& job, ByteBuffer& rle, bool perturb) {
  job.crc = block_crc(job.raw);
  const size_t n = block_text(job.raw, rle).size();
  uint8_t* const text = job.raw.has_runs ? rle.data() : job.raw.buffer.data();
  if (perturb) job.randomised = perturb_if_deep(text, n);
  return {text, n};
}

// Makes a job sortable by a GPU, with its run-length coding in a buffer of its own, so
// that the larger input buffer goes back to the reader at once.
void prepare(Job& job, WorkQueue& queue, bool perturb) {
  if (job.raw.has_runs) job.rle = queue.spare_buffer();
  ready(job, job.rle, perturb);
  if (job.raw.has_runs) queue.recycle(std::move(job.raw.buffer));
  job.prepared = true;
}

}  // namespace

static_assert(symbol_capacity(0) <= BwtWorkspace::kSpareExtra);

CodedBlock BlockCompressor::compress(Job& job) {
  // A GPU-sorted job's text went back to the reader once sorted: only its length counts.
  std::optional<BwtView> own;
  int32_t n = int32_t(job.raw.rle_bytes);
  if (!job.sorted) {
    const std::span<const uint8_t> text = job.prepared ? job.text() : ready(job, rle, perturb);
    n = int32_t(text.size());
    HugePageVector<uint16_t>().swap(symbols);
    own = bwt_forward(text.data(), n, bwt);
    enc.symbols = bwt.spare(n);
  } else {
    bwt = BwtWorkspace();
    resize_scratch(symbols, symbol_capacity(n));
    enc.symbols = symbols.data();
  }
  BitWriter bw;  // encode_block sizes it for the block's data
  if (own)
    encode_block(own->last, n, own->orig_ptr, job.crc, job.randomised, enc, bw);
  else if (job.sorted->mtf.empty())
    encode_block(job.sorted->last.data(), n, job.sorted->orig_ptr, job.crc, job.randomised,
                 enc, bw);
  else
    encode_mtf_block(job.sorted->mtf.data(), n, job.sorted->in_use.data(),
                     job.sorted->orig_ptr, job.crc, job.randomised, enc, bw);
  CodedBlock out;
  out.index = job.raw.index;
  out.nbits = bw.bit_count();
  out.bits = std::move(bw.finish());
  out.crc = job.crc;
  out.input_bytes = job.raw.input_bytes;
  out.randomised = job.randomised;
  return out;
}

void run_cpu_station(WorkQueue& queue, bool perturb) {
  BlockCompressor compressor;
  compressor.perturb = perturb;
  try {
    while (auto job = queue.pop_for_cpu()) {
      if (job->prepare_only) {
        prepare(*job, queue, perturb);
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
