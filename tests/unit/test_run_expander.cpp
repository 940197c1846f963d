// The inverse of the initial run-length coding (RunExpander) against a byte-at-a-time
// reference, on texts dense in runs of four, read in pieces of every size.
#include <catch2/catch.hpp>
#include <random>

#include "common/crc32.h"
#include "decompress/block_decoder.h"

namespace {

std::vector<uint8_t> expand_reference(const std::vector<uint8_t>& text) {
  std::vector<uint8_t> out;
  int run = 0;
  uint8_t last = 0;
  for (uint8_t b : text) {
    if (run == 4) {
      out.insert(out.end(), b, last);
      run = 0;
      continue;
    }
    out.push_back(b);
    run = b == last ? run + 1 : 1;
    last = b;
  }
  return out;
}

// Runs of 1 to 6 equal bytes, each byte from a small alphabet or, one time in eight, any
// byte; long stretches of single bytes between some of them.
std::vector<uint8_t> runny_text(std::mt19937& rng, size_t size, int alphabet) {
  std::vector<uint8_t> t;
  while (t.size() < size) {
    const uint8_t b = uint8_t(rng() % 8 == 0 ? rng() : rng() % alphabet);
    const size_t len = rng() % 16 == 0 ? 40 : 1 + rng() % 6;
    for (size_t i = 0; i < len; i++) t.push_back(len == 40 ? uint8_t(b + i) : b);
  }
  t.resize(size);
  return t;
}

}  // namespace

TEST_CASE("run-length decoding equals the byte-at-a-time inverse, in pieces of any size",
          "[decoder][runs]") {
  std::mt19937 rng(11);
  for (int alphabet : {1, 2, 3, 16}) {
    for (size_t size : {size_t(0), size_t(1), size_t(4), size_t(5), size_t(19), size_t(20),
                        size_t(37), size_t(1000), size_t(20000)}) {
      const std::vector<uint8_t> text = runny_text(rng, size, alphabet);
      const std::vector<uint8_t> want = expand_reference(text);
      const uint32_t want_crc = ~gpbzip2::crc32_update_tables(~0u, want.data(), want.size());
      for (size_t cap : {size_t(1), size_t(3), size_t(19), size_t(20), size_t(21), size_t(33),
                         size_t(256), size_t(1) << 20}) {
        gpbzip2::RunExpander runs(text.data(), text.size());
        std::vector<uint8_t> got, piece(cap);
        while (size_t k = runs.read(piece.data(), cap)) {
          REQUIRE(k <= cap);
          got.insert(got.end(), piece.begin(), piece.begin() + long(k));
        }
        INFO("alphabet " << alphabet << ", text " << size << " bytes, pieces of " << cap);
        REQUIRE(got == want);
        REQUIRE(runs.crc() == want_crc);
      }
    }
  }
}
