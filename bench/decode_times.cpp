// Decompression's stages on one CPU thread, through the library (not the CLI):
//   decode_times [-r RUNS] FILE.bz2
// Finds every block of FILE (one or more streams) by decoding them in order, then times,
// each over all blocks, best of RUNS: symbol decoding (Huffman, MTF, RUNA/RUNB) into the
// decoder's words with byte counts, as the CPU inverse BWT takes them, and into bytes, as
// the GPU's does; the CPU inverse BWT; run-length decoding and the CRC. MB/s are of block
// bytes (the BWT vectors) per second of the thread's CPU time. The runs are interleaved
// stage by stage, so that a noisy machine slows all stages alike. Also prints a hash of
// the BWT vectors, for checking that two builds decode alike, and fails if a block's CRC
// does not match.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/bit_reader.h"
#include "common/format.h"
#include "decompress/block_decoder.h"
#include "thread_time.h"

using namespace gpbzip2;

namespace {

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [-r RUNS] FILE.bz2\n", argv0);
  return 1;
}

uint64_t bits_at(const std::vector<uint8_t>& data, size_t size, uint64_t bit, int n) {
  BitReader br(data.data(), size, bit);
  return br.get(n);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  const char* path = nullptr;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "-r") && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (!path && argv[i][0] != '-')
      path = argv[i];
    else
      return usage(argv[0]);
  }
  if (!path) return usage(argv[0]);
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::perror(path);
    return 1;
  }
  std::vector<uint8_t> data{std::istreambuf_iterator<char>(f), {}};
  const size_t size = data.size();
  data.resize(size + 8, 0);  // the zeros the decoder may read past the end

  BlockDecoder dec;
  std::vector<uint64_t> blocks;
  uint64_t bytes = 0;
  for (size_t pos = 0; pos + 4 <= size && !std::memcmp(&data[pos], "BZh", 3);) {
    uint64_t bit = uint64_t(pos + 4) * 8;
    for (;;) {
      const uint64_t magic = bits_at(data, size, bit, 24) << 24 | bits_at(data, size, bit + 24, 24);
      if (magic == format::kEndMagic) break;
      if (dec.decode_symbols(data.data(), size, bit) != BlockDecoder::Status::Ok) {
        std::fprintf(stderr, "%s: block at bit %llu does not decode: %s\n", path,
                     (unsigned long long)bit, dec.why());
        return 1;
      }
      blocks.push_back(bit);
      bytes += dec.block_bytes();
      bit = dec.end_bit();
    }
    pos = size_t((bit + 48 + 32 + 7) / 8);  // after the stream's CRC and padding
  }
  if (blocks.empty()) {
    std::fprintf(stderr, "%s: no blocks\n", path);
    return 1;
  }

  std::vector<uint8_t> bwt(size_t(format::kMaxBlockBytes));
  std::vector<uint8_t> memory(BlockDecoder::kWorkPages * BlockDecoder::kWorkPage);
  uint8_t* work[BlockDecoder::kWorkPages];
  for (size_t i = 0; i < BlockDecoder::kWorkPages; i++)
    work[i] = memory.data() + i * BlockDecoder::kWorkPage;
  std::vector<uint8_t> out(size_t(1) << 20);
  double t_words = 1e30, t_bytes = 1e30, t_inv = 1e30, t_exp = 1e30;
  uint64_t hash = 0;
  for (int r = 0; r < runs; r++) {
    // Symbols into words, then the inverse BWT and the runs of each block.
    double s_words = 0, s_inv = 0, s_exp = 0;
    for (uint64_t bit : blocks) {
      double t0 = thread_cpu_seconds();
      dec.decode_symbols(data.data(), size, bit);
      s_words += thread_cpu_seconds() - t0;
      t0 = thread_cpu_seconds();
      dec.invert(work);
      s_inv += thread_cpu_seconds() - t0;
      t0 = thread_cpu_seconds();
      RunExpander expander(dec.text().data(), dec.text().size());
      while (expander.read(out.data(), out.size())) {
      }
      s_exp += thread_cpu_seconds() - t0;
      if (expander.crc() != dec.stored_crc()) {
        std::fprintf(stderr, "%s: block at bit %llu: CRC mismatch\n", path,
                     (unsigned long long)bit);
        return 1;
      }
    }
    // Symbols into bytes, hashing the vectors outside the timed part.
    double s_bytes = 0;
    uint64_t h = 1469598103934665603ull;
    for (uint64_t bit : blocks) {
      double t0 = thread_cpu_seconds();
      dec.decode_symbols(data.data(), size, bit, bwt.data());
      s_bytes += thread_cpu_seconds() - t0;
      for (uint32_t i = 0; i < dec.block_bytes(); i++) h = (h ^ bwt[i]) * 1099511628211ull;
      h = (h ^ dec.orig_ptr()) * 1099511628211ull;
    }
    hash = h;
    t_words = std::min(t_words, s_words);
    t_bytes = std::min(t_bytes, s_bytes);
    t_inv = std::min(t_inv, s_inv);
    t_exp = std::min(t_exp, s_exp);
  }
  const double mb = double(bytes) / 1e6;
  std::printf("%zu blocks, %.1f MB of blocks, one thread, best of %d: symbols %.0f MB/s "
              "(into bytes %.0f MB/s), inverse BWT %.0f MB/s, runs and CRC %.0f MB/s; "
              "hash %016llx\n",
              blocks.size(), mb, runs, mb / t_words, mb / t_bytes, mb / t_inv, mb / t_exp,
              (unsigned long long)hash);
  return 0;
}
