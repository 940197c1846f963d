// The queue between the block reader and the compute stations, and the ordered hand-off
// from the stations to the writer. Blocks in flight are bounded whatever the input size.
//
// With GPU stations the queue also decides who sorts what: it learns how fast each GPU
// station sorts and how fast a CPU thread compresses a raw block, keeps raw blocks for
// the GPUs while they keep up, and splits the last blocks so that no slow station holds
// them while faster ones sit idle.
#pragma once
#include <chrono>
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
  // At most max_uncoded blocks read and not yet coded, and kCodedPerUncoded times as many
  // not yet written: a coded block is a quarter of a raw one or less, and a slow block at
  // the head (a CPU sorting one whole) must not stop the rest of the pipeline.
  static constexpr size_t kCodedPerUncoded = 4;
  WorkQueue(size_t max_uncoded, int cpu_stations = 1)
      : max_uncoded_(max_uncoded), cpu_stations_(cpu_stations > 0 ? cpu_stations : 1) {}

  // Reader side. Blocks while the pipeline is full; false once aborted.
  bool push_raw(Job job);
  void close_input(uint64_t total_blocks);

  // CPU stations: sorted work first (it frees memory sooner), then raw blocks unless the
  // GPUs will sort them sooner. Empty once the input is closed and no work is left or
  // still out at a GPU.
  std::optional<Job> pop_for_cpu();

  // GPU stations. Once GPUs are found, the bounds grow by twice the blocks their batches
  // hold (one batch sorting, the next queued), so that the reader fills batches while
  // the GPUs open and keeps ahead of them after; the CPUs leave a batch's worth of raw
  // blocks to each lane while it opens. A station joins once open; a lane that fails to
  // open gives its blocks back.
  void reserve_for_gpus(size_t blocks);
  int add_gpu_station(size_t batch_blocks);
  void gpu_open_failed(size_t batch_blocks);
  // Up to max raw blocks for station `id`: waits for a full batch while more input may
  // come. Empty once no raw block is left for this station (at the end of the input the
  // CPUs may be given the rest); the station then leaves.
  std::vector<Job> pop_raw_batch(int id, size_t max);
  // Hands back sorted jobs, or raw ones the station could not sort; `seconds` is how long
  // the batch took (0: not a measurement).
  void return_from_gpu(int id, std::vector<Job> jobs, double seconds);
  // The station stops taking work (its input ran dry, or its GPU failed).
  void remove_gpu_station(int id);

  // Stations deliver results; the writer takes them in order.
  void deliver(CodedBlock block);
  // A coded block's raw buffer goes back to the reader, which fills it again: a reused
  // buffer is neither faulted in nor zeroed (that was a third of the reader's time).
  void recycle(std::vector<uint8_t> buffer);
  std::vector<uint8_t> spare_buffer();
  // Waits for block `index`; empty at the end of the stream or after an abort.
  std::optional<CodedBlock> take(uint64_t index);

  // The first error wins; every waiting thread wakes and gives up.
  void abort(std::exception_ptr error);
  std::exception_ptr error() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct GpuStation {
    bool active = true;
    double sec_per_byte = 0;  // 0 until its first batch is timed
  };
  struct CpuStart {
    Clock::time_point at;
    size_t bytes;
  };

  bool reader_may_push() const;
  bool cpu_may_take_raw() const;
  size_t gpu_share(int id, size_t max) const;
  double gpu_bytes_per_sec() const;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t max_uncoded_;
  size_t uncoded_ = 0;    // read, not yet delivered by a station
  size_t in_flight_ = 0;  // read, not yet taken by the writer
  size_t at_gpu_ = 0;
  std::deque<Job> raw_, sorted_;
  size_t raw_bytes_ = 0;
  std::map<uint64_t, CodedBlock> done_;
  std::vector<std::vector<uint8_t>> spare_buffers_;
  bool input_closed_ = false;
  uint64_t total_blocks_ = 0;
  std::exception_ptr error_;

  int cpu_stations_;
  // A CPU thread's time per byte for a raw block (BWT and coding); a guess until timed.
  double cpu_sec_per_byte_ = 1.0 / 8e6;
  std::map<uint64_t, CpuStart> cpu_raw_started_;
  std::vector<GpuStation> gpus_;
  int gpus_active_ = 0;
  size_t gpu_opening_blocks_ = 0;  // reserved for lanes still opening
};

}  // namespace gpbzip2
