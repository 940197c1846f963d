// The queue between the block finder and the decode stations, the mirror of
// compress/work_queue.h. The finder (decompress.cpp) submits each candidate block with a
// copy of its input; CPU stations decode its symbols and, while a GPU station wants
// work, hand its BWT vector to the GPU and go on; the GPU inverts batches of them and
// hands them back; a CPU station then finishes each (run-length decoding, CRC). The
// checker takes the results in input order.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "block_decoder.h"
#include "common/byte_vector.h"

namespace gpbzip2 {

// Output is kept in pages, which double as the decoders' work memory.
using Page = std::unique_ptr<uint8_t[]>;
constexpr size_t kPage = BlockDecoder::kWorkPage;
// Output a station keeps per block. Longer output (long runs expand up to 51 times) is
// only checked by the station and produced again, piece by piece, when it is written.
constexpr size_t kHeldOutput = size_t(4) << 20;
constexpr size_t kPiece = size_t(256) << 10;

// Pages handed round rather than allocated per block, which would fragment the heap: the
// pages in use are about the output in flight.
class PagePool {
 public:
  Page take();
  void give(std::vector<Page>& pages, size_t keep = 0);

 private:
  std::mutex mu_;
  std::vector<Page> free_;
};

// One candidate block: a copy of its input, and what decoding it gave.
struct DecodeTask {
  ByteVector data;  // input from byte first_byte on, then 8 zero bytes
  size_t size = 0;
  uint64_t first_byte = 0;
  uint64_t bit = 0;          // the magic, relative to data
  bool reaches_eof = false;  // data ends where the input ends
  bool cut_short = false;    // data ends at the next candidate, not at the span limit
  bool keep_output = true;
  std::atomic<bool> cancelled{false};  // the checker no longer needs it

  // Set by the station that decodes the symbols.
  BlockDecoder::Status status = BlockDecoder::Status::Corrupt;
  const char* why = "";
  uint64_t end_bit = 0;  // relative to data
  uint32_t stored_crc = 0, block_bytes = 0;
  // A block for the GPU: its BWT vector, which the GPU replaces by the text.
  ByteVector bwt;
  uint32_t orig_ptr = 0;
  bool randomised = false;
  bool waiting_for_gpu = false;  // in a GPU lane's queue, not yet in a batch
  bool inverted = false;

  // The result.
  uint32_t crc = 0;
  uint64_t out_bytes = 0;
  std::vector<Page> out;      // all output in pages, unless it was too long to keep
  std::vector<uint8_t> text;  // then the text it is expanded from again
  std::exception_ptr error;
  bool done = false;
};

using TaskPtr = std::shared_ptr<DecodeTask>;

class DecodeQueue {
 public:
  explicit DecodeQueue(size_t max_in_flight) : max_in_flight_(max_in_flight) {}

  // Blocks the finder may have out at once; GPU stations raise it by their batches.
  size_t max_in_flight() const;
  // Finder side.
  void submit(TaskPtr t);
  void wait(const DecodeTask& t);
  // Stations leave now, whatever is queued: the checker is done, or gave up.
  void stop();
  bool stopped() const;

  // CPU stations: blocks back from the GPU first (they hold the most memory), then new
  // ones; blocks the checker no longer needs are skipped. Null once stopped.
  TaskPtr pop_for_cpu();
  // Whether a block whose symbols a CPU just decoded should go to the GPU: while a GPU
  // station is open and its batches are not full.
  bool gpu_wants() const;
  void to_gpu(TaskPtr t);
  void finished(DecodeTask& t);

  // GPU stations. A lane joins once open (raising max_in_flight by two of its batches),
  // takes batches until stopped, and leaves when it fails: what it held goes back to the
  // CPUs (return_from_gpu with the blocks not inverted), and once no lane is left so do
  // the blocks waiting for one.
  void add_gpu_lane(size_t batch_blocks, size_t batch_bytes);
  // A GPU was found and its lanes begin to open: from then on the CPU stations run nicer
  // (thread_priority.h).
  void set_gpu_found() { gpu_found_ = true; }
  bool gpu_found() const { return gpu_found_.load(std::memory_order_relaxed); }
  void remove_gpu_lane();
  // Up to max_blocks blocks of max_bytes in all: a full batch, or what there is once the
  // checker waits for one of them. Empty once stopped.
  std::vector<TaskPtr> pop_gpu_batch(size_t max_blocks, size_t max_bytes);
  void return_from_gpu(std::vector<TaskPtr> tasks);

 private:
  mutable std::mutex mu_;
  std::condition_variable cpu_cv_, gpu_cv_, done_cv_;
  size_t max_in_flight_;
  std::deque<TaskPtr> fresh_, back_from_gpu_, for_gpu_;
  const DecodeTask* checking_ = nullptr;  // the block the checker waits for
  size_t for_gpu_bytes_ = 0;
  size_t gpu_lanes_ = 0, gpu_capacity_ = 0;  // lanes open, and bytes their batches hold
  std::atomic<bool> gpu_found_{false};
  bool stopped_ = false;
};

}  // namespace gpbzip2
