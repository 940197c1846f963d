// Shared by the fuzz harnesses and the seed writer: the input expansion that lets a few
// fuzz bytes describe megabytes, libbzip2 as the oracle, and a failure report.
#pragma once
#include <bzlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/io.h"

namespace fuzz {

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}

inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

// Block boundaries sit near 100 kB multiples, far beyond what a fuzzer mutates well, so
// the harnesses read their input as a small program that writes the data:
//   t < 0x80          copy the next t+1 bytes
//   0x80 <= t < 0xc0  byte b, then a 16-bit little-endian n: b repeated n+1 times
//   t >= 0xc0         16-bit n: copy n+1 bytes from (t & 0x3f)+1 bytes back (periodic data)
// Output stops at `cap` bytes.
inline std::vector<uint8_t> expand(const uint8_t* p, size_t n, size_t cap) {
  std::vector<uint8_t> out;
  size_t i = 0;
  auto u16 = [&]() -> size_t {
    size_t v = i < n ? p[i] : 0;
    v |= size_t(i + 1 < n ? p[i + 1] : 0) << 8;
    i += 2;
    return v;
  };
  while (i < n && out.size() < cap) {
    uint8_t t = p[i++];
    if (t < 0x80) {
      size_t len = std::min<size_t>(t + 1u, n - i);
      out.insert(out.end(), p + i, p + i + len);
      i += len;
    } else if (t < 0xc0) {
      uint8_t b = i < n ? p[i] : 0;
      i++;
      out.insert(out.end(), u16() + 1, b);
    } else {
      size_t dist = (t & 0x3fu) + 1, len = u16() + 1;
      if (dist > out.size()) continue;
      for (size_t k = 0; k < len; k++) out.push_back(out[out.size() - dist]);
    }
  }
  if (out.size() > cap) out.resize(cap);
  return out;
}

// Program pieces for the seed writer.
inline void emit_run(std::vector<uint8_t>& prog, uint8_t b, size_t count) {
  while (count > 0) {
    size_t k = std::min<size_t>(count, 65536);
    prog.insert(prog.end(), {0x80, b, uint8_t((k - 1) & 0xff), uint8_t((k - 1) >> 8)});
    count -= k;
  }
}

inline void emit_literal(std::vector<uint8_t>& prog, const std::vector<uint8_t>& bytes) {
  for (size_t off = 0; off < bytes.size(); off += 128) {
    size_t k = std::min<size_t>(128, bytes.size() - off);
    prog.push_back(uint8_t(k - 1));
    prog.insert(prog.end(), bytes.begin() + long(off), bytes.begin() + long(off + k));
  }
}

inline void emit_copy(std::vector<uint8_t>& prog, size_t dist, size_t count) {
  while (count > 0) {
    size_t k = std::min<size_t>(count, 65536);
    prog.insert(prog.end(), {uint8_t(0xc0 | (dist - 1)), uint8_t((k - 1) & 0xff), uint8_t((k - 1) >> 8)});
    count -= k;
  }
}

// A source that hands out the input in uneven pieces, as pipes and short reads do.
class ChunkedSource final : public gpbzip2::Source {
 public:
  ChunkedSource(const std::vector<uint8_t>& data, uint32_t seed) : data_(data), state_(seed | 1) {}
  size_t read(uint8_t* buf, size_t n) override {
    state_ = state_ * 1103515245u + 12345u;
    size_t want = (state_ >> 16) % 4 == 0 ? 1 + (state_ >> 8) % 7 : 1 + (state_ >> 4) % 70000;
    size_t k = std::min({n, want, data_.size() - pos_});
    std::copy(data_.begin() + long(pos_), data_.begin() + long(pos_ + k), buf);
    pos_ += k;
    return k;
  }

 private:
  const std::vector<uint8_t>& data_;
  size_t pos_ = 0;
  uint32_t state_;
};

// What `bzip2 -<level>` writes: everything through BZ_RUN, then BZ_FINISH.
inline std::vector<uint8_t> bzip2_compress(const std::vector<uint8_t>& in, int level) {
  bz_stream s{};
  check(BZ2_bzCompressInit(&s, level, 0, 30) == BZ_OK, "BZ2_bzCompressInit");
  std::vector<uint8_t> out(in.size() + in.size() / 50 + 1024);
  s.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data()));
  s.avail_in = unsigned(in.size());
  s.next_out = reinterpret_cast<char*>(out.data());
  s.avail_out = unsigned(out.size());
  while (s.avail_in > 0) check(BZ2_bzCompress(&s, BZ_RUN) == BZ_RUN_OK, "BZ_RUN");
  int rc;
  while ((rc = BZ2_bzCompress(&s, BZ_FINISH)) == BZ_FINISH_OK) {
  }
  check(rc == BZ_STREAM_END, "BZ_FINISH");
  // Drops the unused tail (a resize here made GCC 12 warn of a memset of ~2^64 bytes).
  out.erase(out.end() - std::ptrdiff_t(s.avail_out), out.end());
  BZ2_bzCompressEnd(&s);
  return out;
}

// What `bzip2 -d` makes of `in`: the bytes it writes and whether it exits 0. Streams are
// decoded one after another; after the first, bytes that do not start with "BZh" are
// trailing garbage, ignored as bzip2 does (but a stream cut short is an error).
struct Bzip2Result {
  bool ok = false;
  std::vector<uint8_t> out;
};

inline Bzip2Result bzip2_decompress(const std::vector<uint8_t>& in, size_t max_out = size_t(1) << 28) {
  Bzip2Result r;
  size_t pos = 0;
  for (int stream = 1;; stream++) {
    bz_stream s{};
    check(BZ2_bzDecompressInit(&s, 0, 0) == BZ_OK, "BZ2_bzDecompressInit");
    s.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data() + pos));
    s.avail_in = unsigned(in.size() - pos);
    uint8_t buf[65536];
    int rc;
    do {
      s.next_out = reinterpret_cast<char*>(buf);
      s.avail_out = sizeof buf;
      rc = BZ2_bzDecompress(&s);
      r.out.insert(r.out.end(), buf, buf + (sizeof buf - s.avail_out));
      if (r.out.size() > max_out) rc = BZ_MEM_ERROR;
      // With all input consumed and room left for output, libbzip2 is waiting for bytes
      // that will never come.
      if (rc == BZ_OK && s.avail_in == 0 && s.avail_out > 0) rc = BZ_UNEXPECTED_EOF;
    } while (rc == BZ_OK);
    pos = in.size() - s.avail_in;
    BZ2_bzDecompressEnd(&s);
    if (rc == BZ_DATA_ERROR_MAGIC && stream > 1) {
      r.ok = true;
      return r;
    }
    if (rc != BZ_STREAM_END) return r;
    if (pos == in.size()) {
      r.ok = true;
      return r;
    }
  }
}

}  // namespace fuzz
