#include "block_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/crc32.h"
#include "common/format.h"

namespace gpbzip2 {
namespace {

// Every run is seen whole: a run is at most 255 bytes plus the byte that ends it.
constexpr size_t kLookahead = 260;
constexpr size_t kBufferSize = size_t(1) << 20;

// First position in [p, e) where four equal bytes start, or e. Reads up to 3 bytes past
// e, which the caller guarantees are there.
const uint8_t* find_run4(const uint8_t* p, const uint8_t* e) {
#ifdef __SSE2__
  for (; p + 16 <= e; p += 13) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
    unsigned eq = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)));  // bit k: p[k] == p[k+1]
    unsigned run = eq & (eq >> 1) & (eq >> 2) & 0x1fffu;               // p[k..k+3] equal, k < 13
    if (run) return p + std::countr_zero(run);
  }
#endif
  for (; p < e; p++)
    if (p[0] == p[1] && p[1] == p[2] && p[2] == p[3]) return p;
  return e;
}

}  // namespace

BlockReader::BlockReader(Source& src, int level)
    : src_(src), limit_(format::block_limit(level)), buf_(new uint8_t[kBufferSize]) {}

void BlockReader::fill_lookahead() {
  if (eof_ || end_ - pos_ > kLookahead) return;
  std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  while (!eof_ && end_ <= kLookahead) {
    size_t got = src_.read(buf_.get() + end_, kBufferSize - end_);
    eof_ = got == 0;
    end_ += got;
  }
}

// Runs of 1 to 3 bytes are copied as they are, so the block is the input copied in bulk
// between runs of four or more. bzip2 closes a block when a run written fills it; the
// byte that ended that run starts the next block.
bool BlockReader::next(RawBlock& out) {
  // A new buffer grows (doubling) with the block, so that a small input neither zeroes nor
  // faults in a whole block's worth of memory; a recycled one starts at its old size.
  const size_t most = size_t(limit_) + 8;
  out.data.resize(std::min(out.data.capacity(), most));
  const size_t full = size_t(limit_);
  size_t w = 0;
  auto room_for = [&](size_t more) {
    if (w + more > out.data.size())
      out.data.resize(std::min(most, std::max(w + more, 2 * out.data.size())));
  };
  uint64_t consumed = 0;
  for (;;) {
    fill_lookahead();
    if (pos_ == end_) break;
    const uint8_t* const buf = buf_.get();
    const uint8_t* p = buf + pos_;
    const uint8_t* const e = buf + end_;
    // Beyond `scan_end` a run could continue past the buffer; wait for more input.
    const uint8_t* scan_end = eof_ ? (e - p >= 3 ? e - 3 : p) : e - kLookahead;
    const uint8_t* run = find_run4(p, scan_end);
    if (run == scan_end && eof_) run = e;
    size_t literal = size_t(run - p), room = full - w;
    if (literal >= room) {
      // The block fills inside the literal stretch: at the end of the short run that
      // crosses the limit.
      const uint8_t* cut = p + room;
      while (cut < e && cut[0] == cut[-1]) cut++;
      room_for(size_t(cut - p));
      std::memcpy(out.data.data() + w, p, size_t(cut - p));
      w += size_t(cut - p);
      consumed += uint64_t(cut - p);
      pos_ = size_t(cut - buf);
      break;
    }
    room_for(literal + 5);
    uint8_t* const block = out.data.data();
    std::memcpy(block + w, p, literal);
    w += literal;
    p = run;
    if (run < scan_end) {
      const uint8_t* q = run + 4;
      while (q < e && *q == *run && q - run < 255) q++;
      std::memset(block + w, *run, 4);
      block[w + 4] = uint8_t(q - run - 4);
      w += 5;
      p = q;
    }
    consumed += uint64_t(p - (buf + pos_));
    pos_ = size_t(p - buf);
    if (w >= full) break;
  }
  if (w == 0) return false;
  out.data.resize(w);
  out.index = next_index_++;
  out.input_bytes = consumed;
  consumed_ += consumed;
  return true;
}

uint32_t block_crc(const uint8_t* rle, size_t n) {
  // The original bytes are rebuilt a few kilobytes at a time and fed to the CRC in bulk:
  // runs can be dense, and a CRC call per run costs more than the copying.
  constexpr size_t kChunk = 4096;
  uint8_t buf[kChunk + 260];
  size_t fill = 0;
  uint32_t crc = 0xffffffffu;
  const uint8_t* p = rle;
  const uint8_t* const e = rle + n;
  while (p < e) {
    // Four equal bytes are always followed by a count of further copies.
    const uint8_t* run = e - p >= 4 ? find_run4(p, e - 3) : e;
    if (run == e - 3) run = e;
    const uint8_t* literal_end = run == e ? e : run + 4;
    while (p < literal_end) {
      size_t take = std::min(size_t(literal_end - p), kChunk - fill);
      std::memcpy(buf + fill, p, take);
      fill += take;
      p += take;
      if (fill == kChunk) {
        crc = crc32_update(crc, buf, fill);
        fill = 0;
      }
    }
    if (run != e) {
      size_t copies = run + 4 < e ? run[4] : 0;
      std::memset(buf + fill, run[0], copies);
      fill += copies;
      p = std::min(run + 5, e);
      if (fill >= kChunk) {
        crc = crc32_update(crc, buf, fill);
        fill = 0;
      }
    }
  }
  return ~crc32_update(crc, buf, fill);
}

}  // namespace gpbzip2
