// GPU station tests: the GPU rotation sort and inverse BWT against the CPU's, and whole
// streams with the GPU on against libbzip2, both directions. Exit 77 (skipped) where no
// GPU is usable.
//   test_gpu            all checks
//   test_gpu fallback auto|on     with GPBZIP2_FAIL_CUDA_CALL set: output still identical,
//                                 and the failure reported through the notice
//   test_gpu fallback-d auto|on   the same for decompression
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "../unit/test_helpers.h"
#include "compress/block_reader.h"
#include "common/format.h"
#include "generators.h"
#include "common/gpu.h"
#include "compress/gpu_bwt.h"
#include "compress/perturb.h"
#include "decompress/block_decoder.h"
#include "decompress/gpu_inverse_bwt.h"

using namespace gpbzip2;

static int failures = 0;

#define CHECK(cond, what)                                                        \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond,   \
                   std::string(what).c_str());                                   \
      failures++;                                                                \
    }                                                                            \
  } while (0)

static std::vector<uint8_t> compress(const std::vector<uint8_t>& in, int level, GpuMode gpu,
                                     std::string* notices = nullptr, int threads = 2,
                                     bool perturb = false) {
  MemorySource src(in);
  VectorSink sink;
  CompressOptions o;
  o.level = level;
  o.threads = threads;
  o.gpu = gpu;
  o.perturb = perturb;
  o.notice = [&](const std::string& s) {
    if (notices) *notices += s + "\n";
  };
  compress_stream(src, sink, o);
  return sink.data;
}

// Equal rotations exist exactly when the block is w repeated for a shorter w.
static bool periodic(const std::vector<uint8_t>& b) {
  size_t n = b.size();
  for (size_t p = 1; p <= n / 2; p++)
    if (n % p == 0 && std::memcmp(b.data(), b.data() + p, n - p) == 0) return true;
  return false;
}

// One batch of blocks: the GPU must give bwt_forward's result or, for periodic blocks
// only, hand the block back; with the move-to-front step, the MTF positions of that
// result and the bytes in use. The column and the positions also written over the text
// (as the station has them), which a block handed back keeps.
static void check_batch(GpuBwt& gpu, const std::vector<std::vector<uint8_t>>& blocks,
                        const std::string& what) {
  std::vector<BlockView> views, in_place, in_place_columns;
  std::vector<std::vector<uint8_t>> texts = blocks, columns = blocks;
  for (auto& b : blocks) views.push_back({b.data(), b.size()});
  for (auto& t : texts) in_place.push_back({t.data(), t.size(), t.data()});
  for (auto& c : columns) in_place_columns.push_back({c.data(), c.size(), c.data()});
  std::vector<std::optional<BwtResult>> out, moved, moved_in_place, out_in_place;
  gpu.sort(views, out);
  gpu.sort(views, moved, /*move_to_front=*/true);
  gpu.sort(in_place, moved_in_place, /*move_to_front=*/true);
  gpu.sort(in_place_columns, out_in_place);
  BwtWorkspace ws;
  BwtResult ref;
  for (size_t i = 0; i < blocks.size(); i++) {
    std::string name = what + " block " + std::to_string(i) + " size " + std::to_string(blocks[i].size());
    if (blocks[i].empty()) {
      CHECK(!out[i], name);
      continue;
    }
    if (!out[i]) {
      CHECK(periodic(blocks[i]), name + ": handed back but not periodic");
      CHECK((!moved_in_place[i] && texts[i] == blocks[i] && !out_in_place[i] &&
             columns[i] == blocks[i]),
            name + ": handed back, text kept");
      continue;
    }
    CHECK(!periodic(blocks[i]), name + ": periodic block sorted on the GPU");
    bwt_forward(blocks[i].data(), int32_t(blocks[i].size()), ws, ref);
    CHECK(out[i]->orig_ptr == ref.orig_ptr, name + ": origPtr");
    CHECK(out[i]->last == ref.last && !out[i]->moved_to_front, name + ": L column");
    CHECK((out_in_place[i] && out_in_place[i]->last.empty() && columns[i] == ref.last &&
           !out_in_place[i]->moved_to_front && out_in_place[i]->orig_ptr == ref.orig_ptr),
          name + ": L column over the text");
    CHECK(moved[i] && moved[i]->orig_ptr == ref.orig_ptr, name + ": origPtr with MTF");
    if (!moved[i]) continue;
    CHECK(moved[i]->last.empty() && moved[i]->mtf == testing::mtf_positions(ref.last),
          name + ": MTF positions");
    CHECK((moved_in_place[i] && moved_in_place[i]->mtf.empty() &&
           moved_in_place[i]->moved_to_front && texts[i] == moved[i]->mtf &&
           moved_in_place[i]->orig_ptr == ref.orig_ptr),
          name + ": MTF positions over the text");
    std::array<bool, 256> in_use{};
    for (uint8_t c : blocks[i]) in_use[c] = true;
    CHECK(moved[i]->in_use == in_use && moved[i]->moved_to_front, name + ": bytes in use");
    CHECK(moved_in_place[i] && moved_in_place[i]->in_use == in_use,
          name + ": bytes in use, positions over the text");
  }
}

static std::vector<std::vector<uint8_t>> cut_blocks(const std::vector<uint8_t>& in, int level) {
  MemorySource src(in);
  BlockReader reader(src, level);
  std::vector<std::vector<uint8_t>> out;
  ByteVector scratch;
  for (RawBlock b; reader.next(b);) {
    finish_block(b, scratch);
    const std::span<const uint8_t> text = b.text();
    out.emplace_back(text.begin(), text.end());
  }
  return out;
}

static void test_gpu_bwt() {
  GpuBwt gpu(0, 18 * size_t(format::kMaxBlockBytes), 256);
  using corpus::generate;
  // Every kind, small and large, in one mixed batch; every block size from 0 to 40.
  std::vector<std::vector<uint8_t>> mixed;
  for (const auto& kind : corpus::kinds())
    for (size_t size : {size_t(1), size_t(2), size_t(9), size_t(1000), size_t(65536), size_t(300007)})
      mixed.push_back(generate(kind, size, size));
  for (size_t n = 0; n <= 40; n++) mixed.push_back(generate("runs", n, n));
  check_batch(gpu, mixed, "mixed kinds and sizes");

  std::vector<std::vector<uint8_t>> periodic_blocks;
  for (std::string pat : {"ab", "bca", "abcabd", "a", "xyxyxyxz", "\x01\x02\x01"})
    for (size_t size : {size_t(2000), size_t(300001), size_t(899999)})
      periodic_blocks.push_back(generate("periodic", size, 1, pat));
  periodic_blocks.push_back(std::vector<uint8_t>(12345, 'z'));
  // Almost periodic: one byte off, so rotations share prefixes of nearly n.
  auto near = generate("periodic", 500000, 1, "abcab");
  near[250000] ^= 1;
  periodic_blocks.push_back(near);
  check_batch(gpu, periodic_blocks, "periodic");

  // Batches of small alphabets, whose first keys hold dozens of bytes: read cyclically in
  // blocks shorter than that, and from 1 to 4 symbols.
  for (const std::string alphabet : {"z", "ab", "acg", "ACGT"}) {
    std::vector<std::vector<uint8_t>> small;
    std::mt19937 rng(uint32_t(alphabet.size()));
    for (size_t n : {1, 2, 3, 19, 20, 21, 40, 41, 42, 43, 44, 45, 1000, 300007}) {
      std::vector<uint8_t> b(n);
      for (uint8_t& c : b) c = uint8_t(alphabet[rng() % alphabet.size()]);
      small.push_back(std::move(b));
    }
    if (alphabet == "ab")
      for (size_t n : {30, 41, 44, 5000, 899999}) {
        small.push_back(generate("fibonacci", n, 1));
        small.push_back(generate("thue-morse", n, 1));
      }
    check_batch(gpu, small, "alphabet " + alphabet);
  }
  // Groups of every size around the largest a round sorts in place (64) and the largest
  // each thread-block shape sorts (256, 1024, 4096; bigger ones go to the radix sort) in
  // one batch, beside blocks of big groups: c copies of a random chunk, each with a byte
  // changed at its own place, keep their rotations in groups of c for a few rounds, then
  // part.
  std::vector<std::vector<uint8_t>> copies;
  std::mt19937 rng(64);
  for (size_t c : {2, 9, 63, 64, 65, 66, 130, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097}) {
    std::vector<uint8_t> chunk(std::min<size_t>(5000, 800000 / c)), b;
    for (uint8_t& x : chunk) x = uint8_t(rng());
    for (size_t i = 0; i < c; i++) {
      b.insert(b.end(), chunk.begin(), chunk.end());
      b[b.size() - chunk.size() + i * 7919 % chunk.size()] ^= 1;
    }
    copies.push_back(std::move(b));
  }
  copies.push_back(generate("fibonacci", 300000, 1));
  copies.push_back(generate("text", 300000, 1));
  check_batch(gpu, copies, "groups around 64 and each block shape's size");

  // Long repeats with few groups, whose first rounds number the groups densely and sort
  // three or four ranks at once: the words as the reader cuts them, plain and perturbed,
  // and beside blocks of many groups, which a dense number must keep apart.
  for (const std::string kind : {"fibonacci", "thue-morse", "periodic"}) {
    auto blocks = cut_blocks(generate(kind, 5 * size_t(format::kMaxBlockBytes), 5), 9);
    auto perturbed = blocks;
    for (auto& b : perturbed) perturb_if_deep(b.data(), b.size());
    check_batch(gpu, blocks, kind + " -9");
    check_batch(gpu, perturbed, kind + " -9 perturbed");
    perturbed.push_back(generate("text", 700000, 2));
    perturbed.insert(perturbed.begin(), generate("binary", 400000, 2));
    check_batch(gpu, perturbed, kind + " -9 perturbed, text and binary beside");
  }

  // Batches of short blocks alone, whose keys hold up to 63 bytes.
  check_batch(gpu, {{'a'}}, "one byte");
  check_batch(gpu, {{'a'}, {'b', 'a'}, {'a', 'b', 'a'}}, "three short blocks");
  for (size_t n : {50, 57, 58, 59, 63, 64})
    for (const std::string alphabet : {"q", "ab"}) {
      std::vector<uint8_t> b(n);
      for (size_t i = 0; i < n; i++) b[i] = uint8_t(alphabet[i * i % 7 % alphabet.size()]);
      check_batch(gpu, {b}, "one block of " + std::to_string(n) + " over " + alphabet);
    }

  // Blocks as the reader cuts them, at every level, full batches of one kind.
  for (int level = 1; level <= 9; level++)
    for (const std::string kind : {"text", "binary", "runs", "sparse"}) {
      auto blocks = cut_blocks(generate(kind, 3 * size_t(format::block_limit(level)) + 777,
                                        uint64_t(level)), level);
      check_batch(gpu, blocks, kind + " -" + std::to_string(level));
    }
}

// One batch of BWT vectors: the GPU must give the CPU decoder's text for each.
static void check_inverse_batch(GpuInverseBwt& gpu, const std::vector<std::vector<uint8_t>>& vecs,
                                const std::vector<uint32_t>& orig, const std::string& what) {
  std::vector<std::vector<uint8_t>> texts = vecs;
  std::vector<InverseBwtBlock> blocks;
  for (size_t i = 0; i < texts.size(); i++)
    blocks.push_back({texts[i].data(), uint32_t(texts[i].size()), orig[i]});
  gpu.invert(blocks);
  for (size_t i = 0; i < vecs.size(); i++)
    CHECK(texts[i] == BlockDecoder::invert_bwt(vecs[i].data(), uint32_t(vecs[i].size()), orig[i]),
          what + " block " + std::to_string(i) + " size " + std::to_string(vecs[i].size()));
}

static void test_gpu_inverse_bwt() {
  GpuInverseBwt gpu(0, 18 * size_t(format::kMaxBlockBytes), 256);
  using corpus::generate;
  BwtWorkspace ws;
  BwtResult r;
  // The BWT of real blocks: every kind and level, a batch per level.
  for (int level : {1, 5, 9}) {
    std::vector<std::vector<uint8_t>> vecs;
    std::vector<uint32_t> orig;
    for (const auto& kind : corpus::kinds())
      for (auto& block : cut_blocks(generate(kind, size_t(format::block_limit(level)) + 999,
                                             uint64_t(level)), level)) {
        bwt_forward(block.data(), int32_t(block.size()), ws, r);
        vecs.push_back(r.last);
        orig.push_back(r.orig_ptr);
      }
    check_inverse_batch(gpu, vecs, orig, "blocks -" + std::to_string(level));
  }
  // Mixed sizes in one batch: 1-byte blocks, one repeated byte, periodic blocks, and
  // vectors that are no BWT (their rows form several cycles), with every origPtr kind.
  std::vector<std::vector<uint8_t>> vecs;
  std::vector<uint32_t> orig;
  for (uint32_t n : {1u, 2u, 3u, 255u, 256u, 257u, 4096u, 100000u, 900000u}) {
    vecs.push_back(std::vector<uint8_t>(n, uint8_t(n)));
    orig.push_back(n / 2);
    vecs.push_back(generate("binary", n, n));
    orig.push_back(n - 1);
    auto periodic_block = generate("periodic", n, 1, "abcab");
    bwt_forward(periodic_block.data(), int32_t(n), ws, r);
    vecs.push_back(r.last);
    orig.push_back(r.orig_ptr);
  }
  check_inverse_batch(gpu, vecs, orig, "mixed");
}

static std::vector<uint8_t> decompress(const std::vector<uint8_t>& bz, GpuMode gpu,
                                       std::string* notices = nullptr, int threads = 2) {
  MemorySource src(bz);
  VectorSink sink;
  DecompressOptions o;
  o.threads = threads;
  o.gpu = gpu;
  o.notice = [&](const std::string& s) {
    if (notices) *notices += s + "\n";
  };
  decompress_stream(src, &sink, o);
  return sink.data;
}

// Every kind of the corpus back to back, a few blocks at `level`.
static std::vector<uint8_t> all_kinds(int level) {
  std::vector<uint8_t> in;
  for (const auto& kind : corpus::kinds()) {
    auto part = corpus::generate(kind, size_t(level) * 60000 + 12345, uint64_t(level));
    in.insert(in.end(), part.begin(), part.end());
  }
  return in;
}

static void test_decode_streams() {
  using corpus::generate;
  for (int level = 1; level <= 9; level++) {
    const auto in = all_kinds(level);
    auto bz = testing::bzip2_reference(in, level);
    std::string notices;
    CHECK(decompress(bz, GpuMode::On, &notices) == in, "decode -" + std::to_string(level));
    CHECK(notices.empty(), notices);
  }
  // Concatenated streams, many full batches, and a corrupt block late in the input: the
  // same error as the CPU gives.
  auto big = generate("text", 40 << 20, 7);
  auto bz = testing::bzip2_reference(big, 9);
  auto twice = bz;
  twice.insert(twice.end(), bz.begin(), bz.end());
  auto out = decompress(twice, GpuMode::Auto);
  CHECK(out.size() == 2 * big.size() && std::equal(big.begin(), big.end(), out.begin()) &&
            std::equal(big.begin(), big.end(), out.begin() + ptrdiff_t(big.size())),
        "two streams of 40 MB");
  auto bad = bz;
  bad[bad.size() - 5000] ^= 0x10;
  std::string errors[2];
  for (GpuMode mode : {GpuMode::On, GpuMode::Off}) {
    try {
      decompress(bad, mode);
    } catch (const Error& e) {
      errors[mode == GpuMode::On] = e.what();
    }
  }
  CHECK(!errors[0].empty() && errors[0] == errors[1], errors[0] + " / " + errors[1]);
}

static void test_streams() {
  using corpus::generate;
  for (int level = 1; level <= 9; level++) {
    const auto in = all_kinds(level);
    std::string notices;
    auto ours = compress(in, level, GpuMode::On, &notices);
    CHECK(ours == testing::bzip2_reference(in, level), "stream -" + std::to_string(level));
    CHECK(notices.empty(), notices);
  }
  // Many full batches with the GPU in auto mode.
  auto big = generate("text", 24 << 20, 5);
  auto bin = generate("binary", 8 << 20, 6);
  big.insert(big.end(), bin.begin(), bin.end());
  CHECK(compress(big, 9, GpuMode::Auto) == testing::bzip2_reference(big, 9), "32 MB at -9");
}

// --perturb: the GPU sorts the randomised blocks as they are, so the stream is the one the
// CPU alone writes, and libbzip2 reads it.
static void test_perturbed_streams() {
  using corpus::generate;
  for (int level : {1, 9}) {
    const size_t size = 3 * size_t(format::block_limit(level));
    for (const auto& in : {generate("fibonacci", size, 1), generate("repeat", size, 1, "30011"),
                           generate("periodic", size, 1, "abcdefghijklmnopqrstuvwxyz0123456789")}) {
      std::string notices;
      auto ours = compress(in, level, GpuMode::On, &notices, 2, true);
      CHECK(ours == compress(in, level, GpuMode::Off, nullptr, 2, true),
            "perturbed -" + std::to_string(level));
      CHECK(testing::bzip2_decompress(ours, in.size()) == in, "perturbed, libbzip2 decodes");
      CHECK(notices.empty(), notices);
    }
  }
}

int main(int argc, char** argv) {
  try {
    auto devices = list_gpus();
    if (devices.empty()) {
      // Without a GPU, On must refuse (Io error) and Auto must still compress.
      bool refused = false;
      try {
        compress({1, 2, 3}, 9, GpuMode::On);
      } catch (const Error& e) {
        refused = e.kind() == ErrorKind::Io && std::string(e.what()).find("no usable GPU") == 0;
      }
      CHECK(refused, "GpuMode::On without a GPU");
      auto in = corpus::generate("text", 250000, 1);
      CHECK(compress(in, 1, GpuMode::Auto) == testing::bzip2_reference(in, 1), "auto without GPU");
      std::puts(failures ? "FAILED" : "no usable GPU: skipped");
      return failures ? 1 : 77;
    }
    std::printf("GPU 0: %s, %zu MiB\n", devices[0].name.c_str(), devices[0].memory_bytes >> 20);
    if (argc > 2 && !std::strcmp(argv[1], "fallback-d")) {
      // The same for the decode station: a lane failing to open (auto) or in a batch.
      auto in = corpus::generate("text", 48 << 20, 3);
      auto bz = testing::bzip2_reference(in, 9);
      std::string notices;
      GpuMode mode = !std::strcmp(argv[2], "on") ? GpuMode::On : GpuMode::Auto;
      CHECK(decompress(bz, mode, &notices, 2) == in, "fallback decode");
      CHECK(notices.find("failed") != std::string::npos, "no notice: " + notices);
      std::printf("notice: %s", notices.c_str());
    } else if (argc > 2 && !std::strcmp(argv[1], "fallback")) {
      // A failing CUDA call (set by the test's environment) costs only speed: while a
      // lane opens (auto), or in a sort (on: a lane is open before the first block).
      auto in = corpus::generate("text", 16 << 20, 3);
      std::string notices;
      GpuMode mode = !std::strcmp(argv[2], "on") ? GpuMode::On : GpuMode::Auto;
      CHECK(compress(in, 9, mode, &notices, 1) == testing::bzip2_reference(in, 9),
            "fallback stream");
      CHECK(notices.find("failed") != std::string::npos, "no notice: " + notices);
      std::printf("notice: %s", notices.c_str());
    } else {
      test_gpu_bwt();
      test_streams();
      test_perturbed_streams();
      test_gpu_inverse_bwt();
      test_decode_streams();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: exception %s\n", e.what());
    failures++;
  }
  std::puts(failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
