// GPU station tests: the GPU rotation sort against the CPU one, and whole streams with
// the GPU on against libbzip2. Exit 77 (skipped) where no GPU is usable.
//   test_gpu            all checks
//   test_gpu fallback auto|on   with GPBZIP2_FAIL_CUDA_CALL set: output still identical,
//                       and the failure reported through the notice
#include <cstdio>
#include <cstring>
#include <string>

#include "../unit/test_helpers.h"
#include "compress/block_reader.h"
#include "common/format.h"
#include "generators.h"
#include "common/gpu.h"
#include "compress/gpu_bwt.h"

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
                                     std::string* notices = nullptr, int threads = 2) {
  MemorySource src(in);
  VectorSink sink;
  CompressOptions o;
  o.level = level;
  o.threads = threads;
  o.gpu = gpu;
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
// only, hand the block back.
static void check_batch(GpuBwt& gpu, const std::vector<std::vector<uint8_t>>& blocks,
                        const std::string& what) {
  std::vector<BlockView> views;
  for (auto& b : blocks) views.push_back({b.data(), b.size()});
  std::vector<std::optional<BwtResult>> out;
  gpu.sort(views, out);
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
      continue;
    }
    CHECK(!periodic(blocks[i]), name + ": periodic block sorted on the GPU");
    bwt_forward(blocks[i].data(), int32_t(blocks[i].size()), ws, ref);
    CHECK(out[i]->orig_ptr == ref.orig_ptr, name + ": origPtr");
    CHECK(out[i]->last == ref.last, name + ": L column");
  }
}

static std::vector<std::vector<uint8_t>> cut_blocks(const std::vector<uint8_t>& in, int level) {
  MemorySource src(in);
  BlockReader reader(src, level);
  std::vector<std::vector<uint8_t>> out;
  ByteBuffer rle;
  for (RawBlock b; reader.next(b);) {
    const std::span<const uint8_t> text = block_text(b, rle);
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

  // Blocks as the reader cuts them, at every level, full batches of one kind.
  for (int level = 1; level <= 9; level++)
    for (const std::string kind : {"text", "binary", "runs", "sparse"}) {
      auto blocks = cut_blocks(generate(kind, 3 * size_t(format::block_limit(level)) + 777,
                                        uint64_t(level)), level);
      check_batch(gpu, blocks, kind + " -" + std::to_string(level));
    }
}

static void test_streams() {
  using corpus::generate;
  for (int level = 1; level <= 9; level++) {
    std::vector<uint8_t> in;
    for (const auto& kind : corpus::kinds()) {
      auto part = generate(kind, size_t(level) * 60000 + 12345, uint64_t(level));
      in.insert(in.end(), part.begin(), part.end());
    }
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
    if (argc > 2 && !std::strcmp(argv[1], "fallback")) {
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
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: exception %s\n", e.what());
    failures++;
  }
  std::puts(failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
