// fuzz_seeds DIR: writes the seed corpora, DIR/<harness>/<name>, so none are stored in
// the repository. The block-reader and round-trip seeds are expansion programs (see
// fuzz_common.h) aimed at block boundaries and run lengths; the decoder seeds are .bz2
// streams from libbzip2 and damaged or concatenated variants of them.
#include <filesystem>
#include <fstream>
#include <string>

#include "common/format.h"
#include "fuzz_common.h"
#include "generators.h"

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

static void write(const fs::path& dir, const std::string& name, const Bytes& b) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), long(b.size()));
}

// A level byte and a read-splitting byte, then the program.
static Bytes program(int level, uint8_t chunking) { return {uint8_t(level - 1), chunking}; }

// `count` bytes with no two neighbours equal, so their run-length size is their size.
static void emit_runless(Bytes& prog, size_t count) {
  Bytes period;
  for (int i = 0; i < 61; i++) period.push_back(uint8_t(i * 37 + 11));
  size_t head = std::min(count, period.size());
  fuzz::emit_literal(prog, Bytes(period.begin(), period.begin() + long(head)));
  if (count > head) fuzz::emit_copy(prog, period.size(), count - head);
}

static void program_seeds(const fs::path& dir, size_t cap) {
  write(dir, "empty", program(9, 0));
  Bytes p = program(9, 1);
  fuzz::emit_literal(p, gpbzip2::corpus::generate("text", 3000, 2));
  write(dir, "text", p);
  p = program(5, 2);
  for (size_t len = 1; len <= 300; len++) fuzz::emit_run(p, uint8_t('a' + len % 2), len);
  write(dir, "runs_1_300", p);
  // Run-free data ending just before, on and after level 1's block limit.
  const size_t limit1 = size_t(gpbzip2::format::block_limit(1));
  for (long delta : {-1L, 0L, 1L, 5L}) {
    p = program(1, 3);
    emit_runless(p, size_t(long(limit1) + delta));
    write(dir, "limit1_" + std::to_string(delta), p);
  }
  // A long run that reaches the limit: its 5 encoded bytes overshoot it.
  for (size_t before : {limit1 - 1, limit1 - 2, limit1 - 3, limit1 - 4}) {
    p = program(1, 4);
    emit_runless(p, before);
    fuzz::emit_run(p, 'z', 300);
    fuzz::emit_literal(p, {'e', 'n', 'd'});
    write(dir, "run_at_limit1_" + std::to_string(limit1 - before), p);
  }
  // Runs of 255, 256 and 259 equal bytes over several blocks.
  p = program(2, 5);
  for (int rep = 0; rep < 600; rep++) {
    fuzz::emit_run(p, 'x', 255);
    fuzz::emit_run(p, 'y', 256);
    fuzz::emit_run(p, 'z', 259);
    fuzz::emit_literal(p, {uint8_t(rep)});
  }
  write(dir, "long_runs", p);
  if (cap > 1000000) {
    p = program(9, 6);
    emit_runless(p, size_t(gpbzip2::format::block_limit(9)) + 1);
    write(dir, "limit9_1", p);
  }
  p = program(3, 7);
  fuzz::emit_literal(p, gpbzip2::corpus::generate("binary", 2000, 3));
  fuzz::emit_copy(p, 37, 400000);
  write(dir, "periodic", p);
}

static Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

static void decoder_seeds(const fs::path& dir) {
  using gpbzip2::corpus::generate;
  const Bytes text = fuzz::bzip2_compress(generate("text", 5000, 1), 9);
  write(dir, "text", text);
  write(dir, "empty_stream", fuzz::bzip2_compress({}, 9));
  write(dir, "one_byte", fuzz::bzip2_compress({'a'}, 1));
  int level = 1;
  for (const auto& kind : gpbzip2::corpus::kinds()) {
    write(dir, kind, fuzz::bzip2_compress(generate(kind, 2000, 4), level));
    level = level % 9 + 1;
  }
  write(dir, "two_blocks", fuzz::bzip2_compress(generate("runs", 250000, 5), 1));
  write(dir, "two_streams", cat(text, fuzz::bzip2_compress(generate("binary", 700, 6), 4)));
  write(dir, "trailing_garbage", cat(text, {'x', 'y', 'z'}));
  write(dir, "trailing_magic", cat(text, {'B', 'Z', 'h', '9'}));
  write(dir, "truncated", Bytes(text.begin(), text.begin() + long(text.size() / 2)));
  Bytes flipped = text;
  flipped[flipped.size() / 3] ^= 0x10;
  write(dir, "bit_flip", flipped);
  write(dir, "not_bzip2", {'h', 'e', 'l', 'l', 'o'});
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 1;
  }
  const fs::path out = argv[1];
  program_seeds(out / "block_reader", size_t(2) << 20);
  program_seeds(out / "roundtrip", 400000);
  decoder_seeds(out / "decoder");
  return 0;
}
