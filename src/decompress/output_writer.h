// The ordered writer of decompression: writes the output of checked blocks on its own
// thread, so that the checker goes on finding and checking blocks meanwhile.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/io.h"
#include "decode_queue.h"

namespace gpbzip2 {

// A checked block's output: in pages, or (too long to keep) the text it expands from.
struct BlockOutput {
  std::vector<Page> pages;
  std::vector<uint8_t> text;
  uint64_t bytes = 0;
  uint64_t input_end = 0;  // input bytes up to the block's end, for progress
};

class OutputWriter {
 public:
  // progress(input bytes, output bytes) after each block, from the thread that writes it.
  // max_queued 0: no thread; add() writes each block itself (and the first block always).
  OutputWriter(Sink& out, PagePool& pages, size_t max_queued,
               std::function<void(uint64_t, uint64_t)> progress);
  // Writes what it was given, then stops: output before a damaged block is kept.
  ~OutputWriter();
  // Waits while max_queued blocks wait; rethrows the writer's error.
  void add(BlockOutput block);
  // Writes everything; rethrows the writer's error. Returns the bytes written.
  uint64_t finish();

 private:
  void run();
  void write_block(BlockOutput& b);

  Sink& out_;
  PagePool& pages_;
  size_t max_queued_;
  std::function<void(uint64_t, uint64_t)> progress_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<BlockOutput> queue_;
  bool closing_ = false;
  std::exception_ptr error_;
  uint64_t written_ = 0;
  uint64_t written_blocks_ = 0;  // by add() itself
  std::vector<uint8_t> scratch_;  // for blocks written from their text
  std::thread thread_;
};

}  // namespace gpbzip2
