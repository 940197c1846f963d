#include "decode_station.h"

#include "common/format.h"
#include "common/rand_table.h"
#include "common/thread_priority.h"

namespace gpbzip2 {
namespace {

// Undoes the run-length coding of the block's text into its pages (up to kHeldOutput;
// the rest is only counted), checking the CRC of all of it.
void expand(DecodeTask& t, const uint8_t* text, size_t n, PagePool& pool, uint8_t* scratch) {
  RunExpander runs(text, n);
  size_t held = 0;
  if (t.keep_output) {
    for (size_t page = 0; held < kHeldOutput; page++) {
      if (page == t.out.size()) t.out.push_back(pool.take());
      const size_t k = runs.read(t.out[page].get(), kPage);
      held += k;
      if (k < kPage) break;
    }
  }
  bool more = false;
  t.out_bytes = held;
  while (size_t k = runs.read(scratch, kPiece)) {
    more = true;
    t.out_bytes += k;
  }
  t.crc = runs.crc();
  if (more && t.keep_output) {
    held = 0;
    t.text.assign(text, text + n);
  }
  pool.give(t.out, (held + kPage - 1) / kPage);
}

// The decoder's work memory is the pages that then take the output.
void invert_and_expand(DecodeTask& t, BlockDecoder& dec, PagePool& pool, uint8_t* scratch) {
  uint8_t* work[BlockDecoder::kWorkPages];
  const size_t pages = BlockDecoder::work_pages(dec.block_bytes());
  for (size_t i = 0; i < pages; i++) {
    t.out.push_back(pool.take());
    work[i] = t.out.back().get();
  }
  dec.invert({work, pages});
  expand(t, dec.text().data(), dec.text().size(), pool, scratch);
}

// Decodes the symbols, into `bwt` if given; false where the block failed (t.status says
// how).
bool decode_symbols(DecodeTask& t, BlockDecoder& dec, uint8_t* bwt = nullptr) {
  t.status = dec.decode_symbols(t.data.data(), t.size, t.bit, bwt);
  t.data = {};
  if (t.status != BlockDecoder::Status::Ok) {
    t.why = dec.why();
    return false;
  }
  t.end_bit = dec.end_bit();
  t.stored_crc = dec.stored_crc();
  t.block_bytes = dec.block_bytes();
  return true;
}

// One step of a task's way: true when it is done, false when it went to the GPU.
bool work_on(DecodeTask& t, DecodeQueue& queue, const TaskPtr& shared, BlockDecoder& dec,
             PagePool& pool, uint8_t* scratch) {
  if (t.inverted) {
    // Back from the GPU with its text.
    if (t.randomised) flip_randomised_bits(t.bwt.data(), t.bwt.size());
    expand(t, t.bwt.data(), t.bwt.size(), pool, scratch);
    t.bwt = {};
    return true;
  }
  if (!t.bwt.empty()) {
    // Back from a GPU that failed: inverted here, to the same bytes.
    dec.load_bwt(t.bwt.data(), uint32_t(t.bwt.size()), t.orig_ptr, t.randomised);
    t.bwt = {};
    invert_and_expand(t, dec, pool, scratch);
    return true;
  }
  if (queue.gpu_wants()) {
    // For the GPU: the vector goes straight into the block's own bytes.
    t.bwt.resize(format::kMaxBlockBytes);
    if (!decode_symbols(t, dec, t.bwt.data())) {
      t.bwt = {};
      return true;
    }
    t.bwt.resize(t.block_bytes);
    t.orig_ptr = dec.orig_ptr();
    t.randomised = dec.randomised();
    queue.to_gpu(shared);
    return false;
  }
  if (!decode_symbols(t, dec)) return true;
  invert_and_expand(t, dec, pool, scratch);
  return true;
}

}  // namespace

void decode_here(DecodeTask& t, BlockDecoder& dec, PagePool& pages, uint8_t* scratch) {
  if (decode_symbols(t, dec)) invert_and_expand(t, dec, pages, scratch);
}

void run_decode_station(DecodeQueue& queue, PagePool& pages) {
  std::unique_ptr<BlockDecoder> dec;
  std::unique_ptr<uint8_t[]> scratch;  // touched only if used
  bool nicer = false;
  while (TaskPtr t = queue.pop_for_cpu()) {
    if (!nicer && queue.gpu_found()) {
      run_nicer();
      nicer = true;
    }
    bool done = true;
    try {
      // Made here, so that memory running out fails the block, not the thread.
      if (!dec) dec = std::make_unique<BlockDecoder>();
      if (!scratch) scratch.reset(new uint8_t[kPiece]);
      done = work_on(*t, queue, t, *dec, pages, scratch.get());
    } catch (...) {
      t->error = std::current_exception();
    }
    if (done) queue.finished(*t);
  }
}

}  // namespace gpbzip2
