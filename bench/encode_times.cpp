// The CPU's per-block work around the rotation sort, one thread: cuts stdin into blocks
// as the compressor does, sorts each once with bwt_forward (untimed), then times
//   prepare: finish_block (the CRC, and the first run-length coding where the reader
//            left a block as read), on a fresh copy of each block as the reader left it,
//   encode:  encode_block (MTF, zero runs, table choice, bit output),
// each over all blocks, best of R runs. Times are the thread's CPU time, which a busy
// shared machine disturbs far less than wall time.
//   encode_times [-1..-9] [-r RUNS] < input
// Prints MB/s of input bytes (prepare) and of block bytes after the run-length coding
// (encode), and the coded size with a checksum of the coded bits, so that two builds can
// be checked to write the same bytes.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/bit_writer.h"
#include "common/crc32.h"
#include "common/error.h"
#include "common/io.h"
#include "compress/block_encoder.h"
#include "compress/block_reader.h"
#include "compress/bwt.h"
#include "thread_time.h"

namespace {

struct Block {
  gpbzip2::RawBlock raw;  // as the reader left it
  gpbzip2::BwtResult sorted;
  size_t n = 0;
  uint32_t crc = 0;
};

void copy_block(const gpbzip2::RawBlock& from, gpbzip2::RawBlock& to) {
  to.buffer = from.buffer;
  to.input_bytes = from.input_bytes;
  to.rle_bytes = from.rle_bytes;
  to.has_runs = from.has_runs;
  to.as_read = from.as_read;
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [-1..-9] [-r RUNS] < input\n", argv0);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int level = 9, runs = 5;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] >= '1' && argv[i][1] <= '9' && !argv[i][2])
      level = argv[i][1] - '0';
    else if (!std::strcmp(argv[i], "-r") && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else
      return usage(argv[0]);
  }
  if (runs < 1) return usage(argv[0]);

  std::vector<Block> blocks;
  uint64_t input_bytes = 0, block_bytes = 0;
  try {
    gpbzip2::FdSource in(STDIN_FILENO);
    gpbzip2::BlockReader reader(in, level);
    gpbzip2::BwtWorkspace bwt;
    gpbzip2::RawBlock work;
    gpbzip2::ByteVector scratch;
    for (Block b; reader.next(b.raw); b = Block()) {
      copy_block(b.raw, work);
      b.crc = gpbzip2::finish_block(work, scratch);
      const std::span<const uint8_t> text = work.text();
      b.n = text.size();
      gpbzip2::bwt_forward(text.data(), int32_t(b.n), bwt, b.sorted);
      input_bytes += b.raw.input_bytes;
      block_bytes += b.n;
      blocks.push_back(std::move(b));
    }
  } catch (const gpbzip2::Error& e) {
    std::fprintf(stderr, "encode_times: %s\n", e.what());
    return 2;
  }

  double prepare = 0, encode = 0;
  uint64_t bits = 0;
  gpbzip2::EncoderWorkspace ws;
  std::vector<uint16_t> symbols;
  volatile uint32_t sink = 0;  // keeps the prepare loop's results alive
  gpbzip2::RawBlock work;
  gpbzip2::ByteVector scratch;
  std::vector<std::vector<uint8_t>> coded(blocks.size());
  for (int r = 0; r < runs; r++) {
    double p = 0;
    for (const Block& b : blocks) {
      copy_block(b.raw, work);
      const double t = thread_cpu_seconds();
      sink = sink + gpbzip2::finish_block(work, scratch);
      p += thread_cpu_seconds() - t;
    }
    bits = 0;
    double t0 = thread_cpu_seconds();
    for (size_t i = 0; i < blocks.size(); i++) {
      const Block& b = blocks[i];
      gpbzip2::BitWriter out;
      symbols.resize(gpbzip2::symbol_capacity(int32_t(b.n)));
      ws.symbols = symbols.data();
      gpbzip2::encode_block(b.sorted.last.data(), int32_t(b.n), b.sorted.orig_ptr, b.crc, false,
                            ws, out);
      bits += out.bit_count();
      coded[i] = std::move(out.finish());
    }
    const double e = thread_cpu_seconds() - t0;
    prepare = r == 0 ? p : std::min(prepare, p);
    encode = r == 0 ? e : std::min(encode, e);
  }
  uint32_t check = 0;
  for (const std::vector<uint8_t>& c : coded) check = gpbzip2::crc32_update(check, c.data(), c.size());
  std::printf("# %zu blocks at -%d, %llu input bytes, %llu block bytes, best of %d\n",
              blocks.size(), level, static_cast<unsigned long long>(input_bytes),
              static_cast<unsigned long long>(block_bytes), runs);
  std::printf("prepare %.1f MB/s (%.3f s)\n", double(input_bytes) / 1e6 / prepare, prepare);
  std::printf("encode %.1f MB/s (%.3f s)\n", double(block_bytes) / 1e6 / encode, encode);
  std::printf("coded %llu bits, checksum %08x\n", static_cast<unsigned long long>(bits), check);
  return 0;
}
