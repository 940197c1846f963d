// Shared helpers for the unit tests: libbzip2 as the oracle, corpus access, a source of
// uneven reads, a plain move-to-front.
#pragma once
#include <bzlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpbzip2.h"

namespace testing {

// What the bzip2 program writes: all input through BZ_RUN, then BZ_FINISH. (One
// BZ2_bzBuffToBuffCompress call differs when the input fills a block exactly.)
inline std::vector<uint8_t> bzip2_reference(const std::vector<uint8_t>& in, int level) {
  bz_stream s{};
  if (BZ2_bzCompressInit(&s, level, 0, 30) != BZ_OK) throw std::runtime_error("init");
  std::vector<uint8_t> out(in.size() + in.size() / 50 + 1024);
  s.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
  s.avail_in = unsigned(in.size());
  s.next_out = reinterpret_cast<char*>(out.data());
  s.avail_out = unsigned(out.size());
  while (s.avail_in > 0)
    if (BZ2_bzCompress(&s, BZ_RUN) != BZ_RUN_OK) throw std::runtime_error("run");
  while (BZ2_bzCompress(&s, BZ_FINISH) != BZ_STREAM_END) {
  }
  // Drops the unused tail (a resize here made GCC 12 warn of a memset of ~2^64 bytes).
  out.erase(out.end() - std::ptrdiff_t(s.avail_out), out.end());
  BZ2_bzCompressEnd(&s);
  return out;
}

inline std::vector<uint8_t> bzip2_decompress(const std::vector<uint8_t>& in, size_t expect) {
  std::vector<uint8_t> out(expect + 1);
  unsigned len = unsigned(out.size());
  int rc = BZ2_bzBuffToBuffDecompress(reinterpret_cast<char*>(out.data()), &len,
                                      const_cast<char*>(reinterpret_cast<const char*>(in.data())),
                                      unsigned(in.size()), 0, 0);
  if (rc != BZ_OK) throw std::runtime_error("libbzip2 could not decode: " + std::to_string(rc));
  out.resize(len);
  return out;
}

inline std::vector<uint8_t> gp_compress(const std::vector<uint8_t>& in,
                                        const gpbzip2::CompressOptions& o,
                                        gpbzip2::CompressTotals* totals = nullptr) {
  gpbzip2::MemorySource src(in);
  gpbzip2::VectorSink sink;
  const gpbzip2::CompressTotals t = gpbzip2::compress_stream(src, sink, o);
  if (totals) *totals = t;
  return sink.data;
}

inline std::vector<uint8_t> gp_compress(
    const std::vector<uint8_t>& in, int level, int threads = 2,
    std::function<void(uint64_t, uint64_t)> progress = {}) {
  gpbzip2::CompressOptions o;
  o.level = level;
  o.threads = threads;
  o.gpu = gpbzip2::GpuMode::Off;
  o.progress = std::move(progress);
  return gp_compress(in, o);
}

// gpbzip2's decoder on a buffer: what it wrote, and the error it threw, if any.
struct DecodeResult {
  std::optional<gpbzip2::Error> error;
  std::vector<uint8_t> out;
  gpbzip2::DecompressTotals totals;
};

inline DecodeResult gp_decompress(const std::vector<uint8_t>& bz, int threads, bool test_only = false) {
  gpbzip2::MemorySource src(bz);
  gpbzip2::VectorSink sink;
  gpbzip2::DecompressOptions o;
  o.threads = threads;
  DecodeResult r;
  try {
    r.totals = gpbzip2::decompress_stream(src, test_only ? nullptr : &sink, o);
  } catch (const gpbzip2::Error& e) {
    r.error = e;
  }
  r.out = std::move(sink.data);
  return r;
}

// Hands out `data` in reads of 1 to `most` bytes (seeded, so runs repeat), as pipes and
// short reads do; reading at or past `fail_at` throws an I/O error. `positional`: reads at
// offsets too, as a file does (pieces as short, from any thread).
class PieceSource final : public gpbzip2::Source {
 public:
  PieceSource(const std::vector<uint8_t>& data, size_t most,
              size_t fail_at = std::numeric_limits<size_t>::max(), bool positional = false)
      : data_(data), most_(most), fail_at_(fail_at), positional_(positional) {}
  size_t read(uint8_t* buf, size_t n) override {
    const size_t k = read_at(pos_, buf, n);
    pos_ += k;
    return k;
  }
  bool positional() const override { return positional_; }
  size_t read_at(uint64_t offset, uint8_t* buf, size_t n) override {
    const size_t at = size_t(std::min<uint64_t>(offset, data_.size()));
    if (at >= fail_at_) throw gpbzip2::Error(gpbzip2::ErrorKind::Io, "injected read error");
    size_t piece;
    {
      std::lock_guard lk(mu_);
      piece = size_t(1 + rng_() % most_);
    }
    const size_t k = std::min({n, data_.size() - at, fail_at_ - at, piece});
    std::copy_n(data_.data() + at, k, buf);
    return k;
  }
  size_t position() const { return pos_; }

 private:
  const std::vector<uint8_t>& data_;
  size_t most_, fail_at_;
  bool positional_;
  size_t pos_ = 0;
  std::mutex mu_;
  std::mt19937 rng_{5};
};

// bzip2's move-to-front step done the plain way (a list of the bytes in use, ascending
// at first): each byte's position, what the GPU computes for the encoder.
inline std::vector<uint8_t> mtf_positions(const std::vector<uint8_t>& last) {
  bool in_use[256] = {};
  for (uint8_t c : last) in_use[c] = true;
  std::vector<uint8_t> list, out;
  for (int c = 0; c < 256; c++)
    if (in_use[c]) list.push_back(uint8_t(c));
  for (uint8_t c : last) {
    size_t j = 0;
    while (list[j] != c) j++;
    list.erase(list.begin() + std::ptrdiff_t(j));
    list.insert(list.begin(), c);
    out.push_back(uint8_t(j));
  }
  return out;
}

inline std::filesystem::path silesia_dir() { return GPBZIP2_SHARED_CORPUS; }

inline std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

}  // namespace testing
