// gpbzip2 library: standard .bz2 streams, compressed and decompressed in parallel.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "error.h"
#include "io.h"

namespace gpbzip2 {

enum class GpuMode { Auto, On, Off };

struct CompressOptions {
  int level = 9;       // 1..9: block size in units of 100 kB, as bzip2 -1..-9
  int threads = 0;     // CPU stations; 0 means one per core
  GpuMode gpu = GpuMode::Auto;
  // Called from the writer after each block with the totals so far.
  std::function<void(uint64_t bytes_in, uint64_t bytes_out)> progress;
  // One line for the user at -v (GPU fallbacks and the like).
  std::function<void(const std::string&)> notice;
};

struct StreamTotals {
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// Compresses all of `in` into one .bz2 stream, byte-identical to `bzip2 -<level>`.
// Throws Error; on error some output may already have been written.
StreamTotals compress_stream(Source& in, Sink& out, const CompressOptions& opts);

int default_thread_count();

}  // namespace gpbzip2
