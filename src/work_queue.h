// The queue between the block reader and the compute stations, and the ordered hand-off
// from the stations to the writer. Blocks in flight are bounded whatever the input size.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "block_reader.h"
#include "bwt.h"

namespace gpbzip2 {

// A block on its way through the stations: raw (needs the BWT) or already sorted by the
// GPU station (needs only entropy coding).
struct Job {
  RawBlock raw;
  std::optional<BwtResult> sorted;
};

struct CodedBlock {
  uint64_t index = 0;
  std::vector<uint8_t> bits;  // MSB-first, the last byte padded
  uint64_t nbits = 0;
  uint32_t crc = 0;
  uint64_t input_bytes = 0;
};

class WorkQueue {
 public:
  explicit WorkQueue(size_t max_in_flight) : max_in_flight_(max_in_flight) {}

  // Reader side. Blocks while the pipeline holds max_in_flight blocks; false once aborted.
  bool push_raw(Job job);
  void close_input(uint64_t total_blocks);

  // CPU stations: sorted work first (it frees memory sooner), then raw blocks. Empty once
  // the input is closed and no work is left or still out at the GPU.
  std::optional<Job> pop_for_cpu();
  // GPU station: up to max raw blocks; empty once no raw block will come.
  std::vector<Job> pop_raw_batch(size_t max);
  // GPU station hands back sorted jobs, or raw ones it could not sort.
  void return_from_gpu(std::vector<Job> jobs);

  // Stations deliver results; the writer takes them in order.
  void deliver(CodedBlock block);
  // Waits for block `index`; empty at the end of the stream or after an abort.
  std::optional<CodedBlock> take(uint64_t index);

  // The first error wins; every waiting thread wakes and gives up.
  void abort(std::exception_ptr error);
  std::exception_ptr error() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t max_in_flight_;
  size_t in_flight_ = 0;
  size_t at_gpu_ = 0;
  std::deque<Job> raw_, sorted_;
  std::map<uint64_t, CodedBlock> done_;
  bool input_closed_ = false;
  uint64_t total_blocks_ = 0;
  std::exception_ptr error_;
};

}  // namespace gpbzip2
