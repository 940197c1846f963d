// Cuts the input into blocks exactly where bzip2 does. The reader only finds the cuts
// (counting the size of bzip2's first run-length encoding, which restarts at every
// block); the stations encode their own blocks in parallel (block_text). Finding the cuts
// means looking at every byte for runs of four equal ones, which one thread cannot do as
// fast as a GPU sorts: so the input is read in regions that scout threads can search for
// runs while the reader walks the runs found. A run's pieces of up to 255 bytes do not
// depend on where blocks start, so the search needs no cut.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "common/huge_pages.h"
#include "common/io.h"

namespace gpbzip2 {

// Bytes whose growth leaves the new bytes unwritten: a recycled buffer is neither zeroed
// nor faulted in again, and a small input touches only the pages it fills. A block's
// buffer holds its input, up to 51 times the block limit where the input has long runs:
// past kMappedFrom it is mapped on its own, on huge pages where whole ones fit, and grows
// by remapping, so the bytes already read are neither copied nor faulted in again, and
// the smaller buffers it grew out of go back to the system rather than stay in the heap.
class ByteBuffer {
 public:
  static constexpr size_t kMappedFrom = kHugePage / 2;  // as HugePageAllocator::huge
  ByteBuffer() = default;
  ~ByteBuffer() { release(); }
  // A moved-from buffer is empty: it has no memory, so it claims no capacity (a buffer
  // recycled twice once handed out a null pointer with a capacity).
  ByteBuffer(ByteBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), cap_(std::exchange(o.cap_, 0)) {}
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      cap_ = std::exchange(o.cap_, 0);
    }
    return *this;
  }
  uint8_t* data() { return p_; }
  const uint8_t* data() const { return p_; }
  size_t capacity() const { return cap_; }
  bool empty() const { return cap_ == 0; }
  // At least n bytes; the first `keep` survive a move to new memory.
  void reserve(size_t n, size_t keep = 0);

 private:
  void release() noexcept;
  uint8_t* p_ = nullptr;
  size_t cap_ = 0;
};

struct RawBlock {
  uint64_t index = 0;
  ByteBuffer buffer;         // holds the block's input: buffer[0, input_bytes)
  uint64_t input_bytes = 0;  // original bytes in this block
  size_t rle_bytes = 0;      // its size after the first RLE: what the BWT sorts
  bool has_runs = false;     // holds four equal bytes in a row, so the RLE changes it
  std::span<const uint8_t> input() const { return {buffer.data(), size_t(input_bytes)}; }
};

class BlockReader {
 public:
  // Regions of region_bytes, searched by the caller of next() until start_scouts.
  static constexpr size_t kRegionBytes = size_t(1) << 20;
  BlockReader(Source& src, int level, size_t region_bytes = kRegionBytes);
  ~BlockReader();
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;
  // Reads the next block into out.buffer (reusing its memory); returns false when the
  // input is exhausted.
  bool next(RawBlock& out);
  // From now on `count` threads read the regions and search them, ahead of next(): only
  // for a file (a read of a pipe may wait for ever, and a thread waiting there could not
  // be stopped), and only where the reader is the limit, beside GPU stations (it scans
  // about 2 GB/s alone, and the extra copy costs where cores are few).
  void start_scouts(int count);
  // Input bytes cut into blocks so far, and their size after the first RLE.
  uint64_t bytes_read() const { return consumed_; }
  uint64_t rle_bytes_read() const { return rle_consumed_; }
  // True once the input is known to be exhausted: no block follows. (False does not
  // promise one: the input may end just where a block filled.)
  bool at_end() const { return input_end_ && consumed_ == frontier_; }

 private:
  struct Run {
    uint64_t begin, end;  // four or more equal bytes, [begin, end) of the input
  };
  // A region of the input and the runs in it: those wholly inside, and the equal bytes
  // it starts and ends with, which may join runs of the regions beside it.
  struct Region {
    uint64_t begin = 0;
    size_t size = 0;
    std::unique_ptr<uint8_t[]> data;  // null once all its bytes are known equal
    size_t lead = 0, tail = 0;
    uint8_t first = 0, last = 0;
    std::vector<Run> runs;
    bool last_region = false;
    std::exception_ptr error;
    uint64_t end() const { return begin + size; }
  };

  void scout();
  std::unique_ptr<Region> load();
  void scan(Region& r) const;
  std::unique_ptr<Region> take(uint64_t index);
  void release(Region& r);
  void merge_next();
  void close_run(uint64_t begin, uint64_t end);
  uint8_t byte(uint64_t at) const;
  void copy_upto(uint64_t at, RawBlock& out);

  Source& src_;
  const int32_t limit_;
  const size_t region_bytes_;
  size_t max_loaded_ = 0;  // regions holding data, read and not yet released

  // Shared with the scouts.
  std::mutex mu_, read_mu_;  // read_mu_: reads in order, one at a time
  std::condition_variable room_cv_, ready_cv_;
  std::map<uint64_t, std::unique_ptr<Region>> ready_;
  std::vector<std::unique_ptr<uint8_t[]>> spare_;
  size_t loaded_ = 0;
  uint64_t next_load_ = 0, read_pos_ = 0;
  bool read_done_ = false, stop_ = false;
  bool scouting_ = false;  // set before the scouts start, never after: read without mu_
  std::vector<std::thread> scouts_;

  // The reader's own: regions merged into the run list, oldest first.
  std::deque<std::unique_ptr<Region>> held_;
  std::deque<Run> runs_;        // closed runs past the current block's start
  bool open_ = false;           // a run of open_byte_ from open_begin_ reaches frontier_
  uint8_t open_byte_ = 0;
  uint64_t open_begin_ = 0;
  uint64_t next_take_ = 0, frontier_ = 0, copied_ = 0;
  bool input_end_ = false;      // frontier_ is the end of the input
  uint64_t next_index_ = 0;
  uint64_t consumed_ = 0, rle_consumed_ = 0;
};

// What the BWT sorts: the block's input after bzip2's first run-length encoding (runs of
// 4..255 equal bytes become four of them and a count of the rest), written to `rle`; or
// the input itself, uncopied, where it has no run of four.
std::span<const uint8_t> block_text(const RawBlock& b, ByteBuffer& rle);

// The block CRC: of the original bytes, which the block holds.
uint32_t block_crc(const RawBlock& b);

}  // namespace gpbzip2
