// Joins coded blocks, each a whole number of bits, into one .bz2 stream.
#pragma once
#include <cstdint>

#include "common/bit_writer.h"
#include "common/io.h"
#include "work_queue.h"

namespace gpbzip2 {

class StreamWriter {
 public:
  StreamWriter(Sink& sink, int level);
  void add(const CodedBlock& block);
  // Writes the end-of-stream marker and the stream CRC, and flushes.
  void finish();
  uint64_t bytes_written() const { return written_; }

 private:
  void flush_whole_bytes();

  Sink& sink_;
  BitWriter bits_;
  std::vector<uint8_t> out_;
  uint32_t stream_crc_ = 0;
  uint64_t written_ = 0;
};

}  // namespace gpbzip2
