#include "cpu_station.h"

#include <optional>
#include <string>

#include "common/error.h"
#include "common/thread_priority.h"
#include "perturb.h"

namespace gpbzip2 {
namespace {

// The block's CRC (of its original bytes) and its first RLE if the reader left it as
// read, then, with --perturb, its text flipped into a randomised block where the rule
// says (perturb.h): what the sort takes.
std::span<const uint8_t> prepare(Job& job, ByteVector& scratch, bool perturb) {
  job.crc = finish_block(job.raw, scratch);
  if (perturb) job.randomised = perturb_if_deep(job.raw.buffer.data(), job.raw.rle_bytes);
  job.prepared = true;
  return job.text();
}

}  // namespace

static_assert(symbol_capacity(0) <= BwtWorkspace::kSpareExtra);

CodedBlock BlockCompressor::compress(Job& job, const RunTogether* run) {
  std::optional<BwtView> own;
  int32_t n = int32_t(job.raw.rle_bytes);
  const std::optional<Team> team =
      run && job.share_threads > 0 ? std::optional(Team{*run, job.share_threads}) : std::nullopt;
  if (!job.sorted) {
    const std::span<const uint8_t> text =
        job.prepared ? job.text() : prepare(job, scratch, perturb);
    n = int32_t(text.size());
    HugePageVector<uint16_t>().swap(symbols);
    own = bwt_forward(text.data(), n, bwt, team ? &*team : nullptr);
    enc.symbols = bwt.spare(n);
  } else {
    bwt = BwtWorkspace();
    resize_scratch(symbols, symbol_capacity(n));
    enc.symbols = symbols.data();
  }
  BitWriter bw;  // encode_block sizes it for the block's data
  if (own)
    encode_block(own->last, n, own->orig_ptr, job.crc, job.randomised, enc, bw,
                 team ? &*team : nullptr);
  else if (job.sorted->moved_to_front)
    try {
      encode_mtf_block(job.raw.buffer.data(), n, job.sorted->in_use.data(),
                       job.sorted->orig_ptr, job.crc, job.randomised, enc, bw);
    } catch (const Error& e) {  // a GPU's result the encoder refused: say which block
      throw Error(e.kind(), "block " + std::to_string(job.raw.index + 1) + ", sorted on the GPU: " +
                                e.what());
    }
  else
    encode_block(job.raw.buffer.data(), n, job.sorted->orig_ptr, job.crc, job.randomised, enc,
                 bw);
  CodedBlock out;
  out.index = job.raw.index;
  out.nbits = bw.bit_count();
  out.bits = std::move(bw.finish());
  out.crc = job.crc;
  out.input_bytes = job.raw.input_bytes;
  out.randomised = job.randomised;
  return out;
}

void BlockCompressor::release() {
  bwt = BwtWorkspace();
  HugePageVector<uint16_t>().swap(symbols);
  ByteVector().swap(scratch);
}

void run_cpu_station(WorkQueue& queue, bool perturb) {
  BlockCompressor compressor;
  compressor.perturb = perturb;
  const RunTogether run = [&queue](size_t tasks, const std::function<void(size_t)>& body) {
    queue.run_together(tasks, body);
  };
  bool nicer = false;
  try {
    while (auto job = queue.pop_for_cpu()) {
      if (!nicer && queue.gpu_found()) {
        run_nicer();
        nicer = true;
      }
      // With a buffer from the reader's spares, given back at once: no station holds one
      // of its own between blocks.
      if (!job->prepared) {
        ByteVector scratch = queue.spare_buffer();
        prepare(*job, scratch, perturb);
        queue.recycle(std::move(scratch));
      }
      if (job->prepare_only) {
        // A block ordered from its period takes a CPU a few ms, a GPU some 18 doubling
        // rounds: it stays here.
        const std::span<const uint8_t> text = job->text();
        if (!orders_by_period(text.data(), int32_t(text.size()))) {
          queue.prepared(std::move(*job));
          continue;
        }
        queue.kept(*job);
      }
      queue.deliver(compressor.compress(*job, &run));
      queue.recycle(std::move(job->raw.buffer));
      // Out of blocks for good: the sort's arrays would only wait, beside the shared sorts'
      // of the last blocks.
      if (queue.all_taken()) compressor.release();
    }
  } catch (...) {
    queue.abort(std::current_exception());
  }
}

}  // namespace gpbzip2
