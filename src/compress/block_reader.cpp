#include "block_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/crc32.h"
#include "common/error.h"
#include "common/format.h"
#include "run_length.h"

namespace gpbzip2 {
namespace {

// Every run is seen whole: a run is at most 255 bytes plus the byte that ends it.
constexpr size_t kLookahead = 260;
// Reads are at least this long, so that blocks of long runs (up to 51 input bytes per
// encoded one) take few calls.
constexpr size_t kMinRead = size_t(64) << 10;

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

// End of the run that starts at p (four equal bytes, up to e): bzip2 writes a run in
// pieces of at most 255 bytes.
const uint8_t* run_piece_end(const uint8_t* p, const uint8_t* e) {
  return p + 4 + run_length(p + 4, e - p > 255 ? p + 255 : e, *p);
}

}  // namespace

void ByteBuffer::reserve(size_t n, size_t keep) {
  if (n <= cap_) return;
  std::unique_ptr<uint8_t[]> p(new uint8_t[n]);
  if (keep > 0) std::memcpy(p.get(), p_.get(), keep);
  p_ = std::move(p);
  cap_ = n;
}

BlockReader::BlockReader(Source& src, int level) : src_(src), limit_(format::block_limit(level)) {}

// bzip2 writes runs of 1 to 3 bytes as they are, four or more as four and a count, and
// closes a block when a run written fills it; the byte that ended that run starts the next
// block. So the encoded size is counted, not written: literal stretches (found by the
// search for four equal bytes) count one for one, each run piece five.
bool BlockReader::next(RawBlock& out) {
  ByteBuffer& buf = out.buffer;
  if (!carry_.empty()) {
    buf.reserve(carry_.size());
    std::memcpy(buf.data(), carry_.data(), carry_.size());
  }
  size_t end = carry_.size(), pos = 0;
  carry_.clear();
  const size_t full = size_t(limit_);
  size_t w = 0;  // encoded size so far
  bool runs = false;
  for (;;) {
    if (!eof_ && end - pos <= kLookahead) {
      // Enough to reach the cut should the rest have no runs, and to see past it.
      const size_t want = std::max(kMinRead, full - w + kLookahead + 3 - (end - pos));
      if (buf.capacity() - end < want) {
        // Room for the whole block at the encoding ratio seen so far (blocks of long runs
        // hold many times the limit): one move of what is read, not a move per doubling.
        const size_t expected = w > 0 ? size_t(double(pos) * double(full) / double(w)) : 0;
        buf.reserve(std::max({end + want, 2 * buf.capacity(), expected + want}), end);
      }
      const size_t got = src_.read(buf.data() + end, want);
      eof_ = got == 0;
      end += got;
      continue;
    }
    if (pos == end) break;
    const uint8_t* const base = buf.data();
    const uint8_t* p = base + pos;
    const uint8_t* const e = base + end;
    // Beyond `scan_end` a run could continue past what is read; wait for more input.
    const uint8_t* const scan_end = eof_ ? (e - p >= 3 ? e - 3 : p) : e - kLookahead;
    const size_t room = full - w;
    // A run that starts `room` bytes on or later does not matter: the block fills first.
    const uint8_t* const bound = size_t(scan_end - p) > room ? p + room : scan_end;
    const uint8_t* run = find_run4(p, bound);
    if (run == scan_end && eof_) run = e;
    const size_t literal = size_t(run - p);
    if (literal >= room) {
      // The block fills inside the literal stretch: at the end of the short run that
      // crosses the limit.
      const uint8_t* cut = p + room;
      while (cut < e && cut[0] == cut[-1]) cut++;
      w += size_t(cut - p);
      pos = size_t(cut - base);
      break;
    }
    w += literal;
    p = run;
    if (run < scan_end) {
      p = run_piece_end(run, e);
      w += 5;
      runs = true;
    }
    pos = size_t(p - base);
    if (w >= full) break;
  }
  if (w == 0) return false;
  carry_.assign(buf.data() + pos, buf.data() + end);
  out.index = next_index_++;
  out.input_bytes = pos;
  out.rle_bytes = w;
  out.has_runs = runs;
  consumed_ += pos;
  rle_consumed_ += w;
  return true;
}

std::span<const uint8_t> block_text(const RawBlock& b, ByteBuffer& rle) {
  if (!b.has_runs) return b.input();
  rle.reserve(b.rle_bytes);
  const uint8_t* p = b.buffer.data();
  const uint8_t* const e = p + b.input_bytes;
  uint8_t* const out = rle.data();
  size_t w = 0;
  while (e - p >= 4) {
    const uint8_t* run = find_run4(p, e - 3);
    std::memcpy(out + w, p, size_t(run - p));
    w += size_t(run - p);
    p = run;
    if (run == e - 3) break;
    p = run_piece_end(run, e);
    std::memset(out + w, *run, 4);
    out[w + 4] = uint8_t(p - run - 4);
    w += 5;
  }
  std::memcpy(out + w, p, size_t(e - p));
  w += size_t(e - p);
  // The reader counted this size; the two must agree or the buffer was too small.
  if (w != b.rle_bytes) throw Error(ErrorKind::Internal, "block size after run-length coding");
  return {out, w};
}

uint32_t block_crc(const RawBlock& b) {
  return ~crc32_update(0xffffffffu, b.buffer.data(), size_t(b.input_bytes));
}

}  // namespace gpbzip2
