// gpbzip2 library: standard .bz2 streams, compressed and decompressed in parallel.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "common/error.h"
#include "common/io.h"

namespace gpbzip2 {

enum class GpuMode { Auto, On, Off };

struct CompressOptions {
  int level = 9;       // 1..9: block size in units of 100 kB, as bzip2 -1..-9
  int threads = 0;     // CPU stations; 0 means one per core
  GpuMode gpu = GpuMode::Auto;
  // Bytes of input expected (a regular file's size), or 0 when unknown (a pipe): with
  // GpuMode::Auto, a GPU opens at once for large inputs and never for small ones.
  uint64_t input_size = 0;
  // Blocks whose sort would go deep (long repeats: many GPU doubling rounds) are written
  // as bzip2's randomised blocks, which sort shallow; the stream is then no longer what
  // bzip2 writes, and a little larger. Off: every block as bzip2 writes it.
  bool perturb = false;
  // Called from the writer after each block with the totals so far.
  std::function<void(uint64_t bytes_in, uint64_t bytes_out)> progress;
  // One line for the user at -v (GPU fallbacks and the like).
  std::function<void(const std::string&)> notice;
};

struct StreamTotals {
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

struct CompressTotals : StreamTotals {
  uint64_t blocks = 0;
  uint64_t perturbed_blocks = 0;  // of them, written randomised (CompressOptions::perturb)
};

// Compresses all of `in` into one .bz2 stream, byte-identical to `bzip2 -<level>` unless
// opts.perturb. Throws Error; on error some output may already have been written.
CompressTotals compress_stream(Source& in, Sink& out, const CompressOptions& opts);

// The most GPUs compress_stream opens for an input of `input_size` bytes (as
// CompressOptions has it; 0 for a pipe), whatever the input holds. Decompression opens one.
int most_compress_gpus(uint64_t input_size);

struct DecompressOptions {
  int threads = 0;  // decoding threads; 0 means one per core
  GpuMode gpu = GpuMode::Auto;
  // Bytes of compressed input expected (a regular file's size), or 0 when unknown: with
  // GpuMode::Auto, a GPU opens at once for large inputs and never for small ones.
  uint64_t input_size = 0;
  std::function<void(uint64_t bytes_in, uint64_t bytes_out)> progress;
  std::function<void(const std::string&)> notice;
};

struct DecompressTotals : StreamTotals {
  int streams = 0;                // complete .bz2 streams decoded
  bool trailing_garbage = false;  // bytes after the last stream that are not a stream
};

// Decodes every .bz2 stream in `in` (concatenated streams give the concatenation) into
// `out`; with out == nullptr only checks, as `bzip2 -t`. Throws Error: Corrupt with the
// block number and bit offset, Truncated, NotBzip2 (the input does not start with a
// stream), Io.
DecompressTotals decompress_stream(Source& in, Sink* out, const DecompressOptions& opts);

int default_thread_count();

}  // namespace gpbzip2
