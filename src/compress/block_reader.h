// Cuts the input into blocks exactly where bzip2 does. The reader counts the size of
// bzip2's first run-length encoding, which restarts at every block, and copies each
// block's input as read, leaving the encoding to the block's station (finish_block), so
// that the stations encode in parallel; where a block's runs save much, it writes the
// rest of that block encoded itself, so that no block holds much more than the limit.
// Finding the cuts means looking at every byte for runs of four equal ones, which one
// thread cannot do as fast as a GPU sorts: so the input is read in regions that scout
// threads can search for runs while the reader walks the runs found. A run's pieces of up
// to 255 bytes do not depend on where blocks start, so the search needs no cut.
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
#include <vector>

#include "common/byte_vector.h"
#include "common/io.h"

namespace gpbzip2 {

// Input a block refers to instead of holding it: bytes of a region the reader read, or
// `size` copies of `fill` where a whole region holds one byte.
struct InputPiece {
  std::shared_ptr<const uint8_t> region;  // null for a fill
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint8_t fill = 0;
};

struct RawBlock {
  uint64_t index = 0;
  // The block after the first RLE, buffer[0, rle_bytes), once its first `as_read` input
  // bytes, which the buffer holds as read, are encoded too (finish_block); the reader
  // wrote the rest of it encoded, after them.
  ByteVector buffer;
  uint64_t input_bytes = 0;  // original bytes in this block
  size_t rle_bytes = 0;      // its size after the first RLE: what the BWT sorts
  bool has_runs = false;     // holds four equal bytes in a row, so the RLE changes it
  size_t as_read = 0;        // 0 where it has no runs
  // Where scouts read a file (start_scouts) the reader leaves the copy of the input held
  // as read to the block's station: these pieces, copied to the front of buffer by
  // finish_block, so that one thread does not copy every byte.
  std::vector<InputPiece> pieces;
  // What the BWT sorts, once finished.
  std::span<const uint8_t> text() const { return {buffer.data(), rle_bytes}; }
};

class BlockReader {
 public:
  // Regions of region_bytes, searched by the caller of next() until start_scouts.
  static constexpr size_t kRegionBytes = size_t(1) << 20;
  // Past the point where a block's runs have saved this many bytes, the reader writes
  // the rest of it encoded: so no block holds more than the limit and this, where one of
  // long runs would hold up to 51 times the limit as read (46 MB at -9), and the reader
  // still copies most blocks, whose runs save less, in one piece per region.
  static constexpr size_t kMostSaved = size_t(1) << 19;
  BlockReader(Source& src, int level, size_t region_bytes = kRegionBytes);
  ~BlockReader();
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;
  // Reads the next block into out.buffer (reusing its memory); returns false when the
  // input is exhausted.
  bool next(RawBlock& out);
  // From now on `count` threads search the regions for runs ahead of next(), and read
  // them too where the source reads at offsets (a file), each its own regions at once.
  // Elsewhere (a pipe) the reader reads on alone, a few regions ahead: a read of a pipe
  // may wait for ever, and a thread waiting there could not be stopped. Blocks of a file
  // then refer to the regions (RawBlock::pieces) instead of holding a copy.
  // Only where the reader is the limit (it scans about 1-2 GB/s alone, and the extra copy
  // costs where cores are few). A scout that fails (memory ran out) stops the others, and
  // next() throws its error.
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
    std::shared_ptr<uint8_t> data;  // null once all its bytes are known equal
    size_t lead = 0, tail = 0;
    uint8_t first = 0, last = 0;
    std::vector<Run> runs;
    bool last_region = false;
    std::exception_ptr error;
    uint64_t end() const { return begin + size; }
  };

  void scout();
  void scout_reads_of_reader();
  void scout_failed(std::exception_ptr error);
  void read_ahead(std::unique_lock<std::mutex>& lk, uint64_t index);
  std::unique_ptr<Region> new_region(uint64_t begin);
  std::unique_ptr<Region> load();
  std::unique_ptr<Region> load_at(uint64_t index);
  void scan(Region& r) const;
  std::unique_ptr<Region> take(uint64_t index);
  void release(Region& r);
  void merge_next();
  void close_run(uint64_t begin, uint64_t end);
  uint8_t byte(uint64_t at) const;
  const Region* copy(uint64_t begin, uint64_t end, uint8_t* out) const;
  void refer(uint64_t begin, uint64_t end, std::vector<InputPiece>& pieces) const;
  void copy_stretch(uint64_t begin, uint64_t end, uint8_t* out);
  void release_before(uint64_t at);

  Source& src_;
  const int32_t limit_;
  const size_t region_bytes_;
  size_t max_loaded_ = 0;  // regions holding data, read and not yet released

  // Shared with the scouts.
  std::mutex mu_;
  std::condition_variable room_cv_, ready_cv_, scan_cv_;
  std::map<uint64_t, std::unique_ptr<Region>> ready_;
  // From a pipe: regions the reader read, for the scouts to search.
  std::deque<std::pair<uint64_t, std::unique_ptr<Region>>> to_scan_;
  // Region buffers come back here when the reader and every block that refers to them
  // are done with them: they are reused, not faulted in again.
  struct Spares {
    std::mutex mu;
    std::vector<std::unique_ptr<uint8_t[]>> buffers;
  };
  std::shared_ptr<Spares> spare_ = std::make_shared<Spares>();
  size_t loaded_ = 0;
  uint64_t next_load_ = 0, read_pos_ = 0;
  // Region scout_first_ + i that scouts read starts at scout_begin_ + i * region_bytes_.
  uint64_t scout_first_ = 0, scout_begin_ = 0;
  bool read_done_ = false, stop_ = false;
  std::exception_ptr scout_error_;  // the first scout's failure
  // Set before the scouts start, never after: read without mu_.
  bool scouting_ = false, reader_reads_ = false;
  std::vector<std::thread> scouts_;

  // The reader's own: regions merged into the run list, oldest first.
  std::deque<std::unique_ptr<Region>> held_;
  const Region* stretch_region_ = nullptr;  // where copy_stretch found bytes last
  std::deque<Run> runs_;        // closed runs past the current block's start
  bool open_ = false;           // a run of open_byte_ from open_begin_ reaches frontier_
  uint8_t open_byte_ = 0;
  uint64_t open_begin_ = 0;
  uint64_t next_take_ = 0, frontier_ = 0;
  bool input_end_ = false;      // frontier_ is the end of the input
  uint64_t next_index_ = 0;
  uint64_t consumed_ = 0, rle_consumed_ = 0;
};

// What the reader leaves to the block's station: the copy of the input it referred to,
// the block CRC (of the original bytes) and the first RLE of the input it left as read;
// the block is then written to `scratch`, which trades places with the block's buffer.
// Returns the CRC.
uint32_t finish_block(RawBlock& b, ByteVector& scratch);

}  // namespace gpbzip2
