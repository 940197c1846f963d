// The queue between the block reader and the compute stations, and the ordered hand-off
// from the stations to the writer. Blocks in flight are bounded whatever the input size.
//
// With GPU stations the queue also decides who sorts what: it learns how fast each GPU
// station sorts and how fast a CPU thread compresses a block, has the CPUs prepare blocks
// for the GPUs (run-length coding and CRC) while the GPUs keep up, and splits the last
// blocks so that no slow station holds them while faster ones sit idle.
//
// Each kind of waiter (reader, CPU stations, GPU lanes, writer) has its own condition
// variable and is woken only by events that can let it go on, one thread where one can
// take the work: waking every thread on every event (the herd suspected of flattening
// 48-64 threads, kernels/NOTES.md) makes them queue for the lock.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "block_reader.h"
#include "bwt.h"

namespace gpbzip2 {

// A block on its way through the stations: as read, then (once prepared) with its CRC,
// then possibly sorted by a GPU station, then needing only entropy coding.
struct Job {
  RawBlock raw;
  // Set by the queue on a job a CPU should only prepare and hand back (WorkQueue::prepared).
  bool prepare_only = false;
  bool prepared = false;  // the CRC is known, and --perturb has had its say
  uint32_t crc = 0;
  bool randomised = false;  // --perturb flipped its text's bits: a randomised block
  // Once sorted by a GPU: orig_ptr, and the last column written over the text (one
  // buffer a block, not a second for the result), or its MTF positions and the bytes in
  // use where the GPU moved it to front.
  std::optional<BwtResult> sorted;
  // One of the last blocks (or of an input of a few), whose sort the stations left idle
  // help with (run_together): about this many threads a block still to sort. 0: alone.
  int share_threads = 0;
  // What the BWT sorts, until sorted.
  std::span<const uint8_t> text() const { return raw.text(); }
};

struct CodedBlock {
  uint64_t index = 0;
  std::vector<uint8_t> bits;  // MSB-first, the last byte padded
  uint64_t nbits = 0;
  uint32_t crc = 0;
  uint64_t input_bytes = 0;
  bool randomised = false;
};

class WorkQueue {
 public:
  // From this many CPU stations that can share a sort (those started, up to `sharing`
  // below), the blocks popped once fewer than a quarter of that are left to start are
  // sorted together with the stations out of work. Sorted alone, a shared sort costs
  // 1.2-1.4 times libdivsufsort's time (2-core Xeon VM; about twice the induced sort's), so
  // two or three stations would gain nothing at the end of a run.
  static constexpr int kShareMinStations = 4;
  // Blocks are shared where fewer than this many are left to start (blocks queued and the
  // reader's `coming`), among `sharing` stations.
  static uint64_t share_below(int sharing) { return uint64_t(sharing / 4); }
  // Nor are blocks with less to sort shared: one of 300 kB took 22 ms alone and 14 shared
  // on an H100 host's 16 cores, one of 100 kB 13 and 17 (session 24).
  static constexpr uint64_t kShareMinBytes = 200000;
  // At most max_uncoded blocks read and not yet coded, and kCodedPerUncoded times as many
  // not yet written: a coded block is a quarter of a raw one or less, and a slow block at
  // the head (a CPU sorting one whole) must not stop the rest of the pipeline.
  static constexpr size_t kCodedPerUncoded = 4;
  // `sharing`: the most CPU stations that count for sharing a sort, those on cores of
  // their own (the rule above, the threads a block is told); more may still help.
  WorkQueue(size_t max_uncoded, int cpu_stations = 1,
            int sharing = std::numeric_limits<int>::max())
      : max_uncoded_(max_uncoded), cpu_stations_(cpu_stations > 0 ? cpu_stations : 1),
        sharing_(sharing) {}

  // Reader side. Blocks while the pipeline is full; false once aborted. `coming`: about how
  // many blocks are still to come after this one (a file's unread part at the rate read so
  // far), so that the last blocks of an input, or every block of a small one, can be
  // shared before it closes.
  bool push_raw(Job job, std::optional<uint64_t> coming = std::nullopt);
  void close_input(uint64_t total_blocks);

  // CPU stations: a block to prepare for a waiting GPU, then sorted work (it frees memory
  // sooner), then blocks the GPUs handed back, then a block to compress whole unless the
  // GPUs will sort it sooner, else a block to prepare for the GPUs. Empty once the input
  // is closed and no work is left or still out at a GPU or a CPU: a station out of work
  // waits while others hold blocks, and runs the tasks of their shared sorts.
  std::optional<Job> pop_for_cpu();
  // A CPU station was started: the last blocks' sorts are shared where there are enough.
  void cpu_station_added();
  // Runs body(0..tasks-1) on this station and on the CPU stations left without work, for
  // a job popped with share_threads (team.h's RunTogether).
  void run_together(size_t tasks, const std::function<void(size_t)>& body);
  // A job popped with prepare_only, now prepared: it waits for a sorter.
  void prepared(Job job);
  // Or the CPU that prepared it compresses it whole after all (the GPUs would sort it
  // slower: bwt.h's orders_by_period), and delivers it.
  void kept(const Job& job);

  // GPU stations. Once GPUs are found, the bounds grow by the blocks their batches hold,
  // so that the reader fills batches while the GPUs open and keeps ahead of them after
  // (twice that, a batch queued behind each one sorting, was no faster and held 150 MB
  // more on an H100 with 12 lanes: kernels/NOTES.md); the CPUs leave a batch's worth of raw
  // blocks to each lane while it opens. A station joins once open; a lane that fails to
  // open gives its blocks back.
  void reserve_for_gpus(size_t blocks);
  // Whether a GPU station has joined (and not yet left).
  bool gpu_stations_open();
  // Whether the reader has pushed its last block.
  bool input_closed();
  // Whether no block is left for any station to take: the input is closed and every block
  // is out at a CPU station or done.
  bool all_taken();
  // Whether a GPU was found and its stations began to open: from then on the CPU stations
  // run nicer (thread_priority.h).
  bool gpu_found() const { return gpu_found_.load(std::memory_order_relaxed); }
  // Whether the GPUs that CPU stations were held back for are not coming after all: none
  // was found, or every lane failed or left.
  void no_gpu_found() { gpus_lost_ = true; }
  bool gpus_lost() const { return gpus_lost_.load(std::memory_order_relaxed); }
  int add_gpu_station(size_t batch_blocks);
  void gpu_open_failed(size_t batch_blocks);
  // Up to max prepared blocks for station `id`: waits for a full batch while more may
  // come. Empty once none is left for this station (at the end of the input the CPUs may
  // be given the rest); the station then leaves.
  std::vector<Job> pop_raw_batch(int id, size_t max);
  // Whether a station's next batch gets the move-to-front step on the GPU too. That step
  // costs the GPU about 14% more time, so the CPUs do it where the GPUs are the limit (more
  // than a batch waits for them) and the CPUs keep up (no more than two batches of
  // GPU-sorted blocks wait for them); from a pipe the reader is the limit, and the CPUs'
  // extra work would slow it (kernels/NOTES.md).
  bool gpu_moves_to_front();
  // Hands back sorted jobs, or ones the station could not sort (the CPUs compress those
  // whole); `seconds` is how long the batch took (0: not a measurement).
  void return_from_gpu(int id, std::vector<Job> jobs, double seconds);
  // The station stops taking work (its input ran dry, or its GPU failed).
  void remove_gpu_station(int id);

  // Stations deliver results; the writer takes them in order.
  void deliver(CodedBlock block);
  // A job's buffers go back to the reader and to the CPUs preparing blocks, which fill
  // them again: a reused buffer is neither faulted in nor zeroed. Empty ones are ignored.
  void recycle(ByteVector buffer);
  ByteVector spare_buffer();
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
  // Tasks a station offers to the idle ones.
  struct Offer {
    const std::function<void(size_t)>* body;
    size_t count;
    std::atomic<size_t> next{0};
    int helpers = 0;  // stations running its tasks, under mu_
    std::exception_ptr error;
  };
  struct CpuStart {
    Clock::time_point at;
    size_t bytes;
  };

  bool reader_may_push() const;
  bool gpus_present() const { return gpus_active_ > 0 || gpu_opening_blocks_ > 0; }
  bool cpu_may_compress() const;
  bool cpus_done() const;
  int share_threads(const Job& job) const;
  bool gpu_batch_ready(size_t max) const;
  void notify_gpus();
  std::optional<Job> take_for_cpu();
  size_t gpu_share(int id, size_t max) const;
  double gpu_bytes_per_sec() const;

  mutable std::mutex mu_;
  std::condition_variable reader_cv_, cpu_cv_, gpu_cv_, writer_cv_, helped_cv_;
  size_t max_uncoded_;
  size_t uncoded_ = 0;    // read, not yet delivered by a station
  size_t in_flight_ = 0;  // read, not yet taken by the writer
  size_t at_gpu_ = 0;
  size_t preparing_ = 0;  // out at CPUs to be prepared
  int cpu_started_ = 0;   // CPU stations started
  std::vector<Offer*> offers_;
  // input_: as read; ready_: prepared, for a sorter; sorted_: sorted by a GPU;
  // declined_: handed back unsorted by a GPU.
  std::deque<Job> input_, ready_, sorted_, declined_;
  size_t unsorted_bytes_ = 0;  // encoded bytes of input_, ready_ and those being prepared
  std::map<uint64_t, CodedBlock> done_;
  uint64_t writer_wants_ = 0;
  std::vector<ByteVector> spare_buffers_;
  bool input_closed_ = false;
  std::optional<uint64_t> coming_;  // the reader's estimate while open
  uint64_t total_blocks_ = 0;
  std::exception_ptr error_;

  int cpu_stations_;
  int sharing_;
  // A CPU thread's time per byte for a raw block (BWT and coding); a guess until timed.
  double cpu_sec_per_byte_ = 1.0 / 8e6;
  std::map<uint64_t, CpuStart> cpu_raw_started_;
  std::vector<GpuStation> gpus_;
  int gpus_active_ = 0;
  int gpus_waiting_ = 0;           // lanes waiting for a batch
  size_t gpu_batch_blocks_ = 0;    // the largest batch a lane takes
  size_t gpu_opening_blocks_ = 0;  // reserved for lanes still opening
  std::atomic<bool> gpu_found_{false};
  std::atomic<bool> gpus_lost_{false};
};

}  // namespace gpbzip2
