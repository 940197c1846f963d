#include "block_reader.h"

#include "crc32.h"
#include "format.h"

namespace gpbzip2 {

BlockReader::BlockReader(Source& src, int level)
    : src_(src), limit_(format::block_limit(level)), buf_(1 << 20) {}

bool BlockReader::refill() {
  if (eof_) return false;
  pos_ = 0;
  end_ = src_.read(buf_.data(), buf_.size());
  total_in_ += end_;
  if (end_ == 0) eof_ = true;
  return end_ > 0;
}

static inline uint8_t* put_run(uint8_t* w, uint8_t ch, int len) {
  w[0] = ch;
  if (len >= 2) w[1] = ch;
  if (len >= 3) w[2] = ch;
  if (len >= 4) {
    w[3] = ch;
    w[4] = uint8_t(len - 4);
    return w + 5;
  }
  return w + len;
}

// A block's original bytes are contiguous in the input, so its CRC is taken over input
// slices as they are consumed rather than byte by byte inside the run loop.
bool BlockReader::next(RawBlock& out) {
  out.data.resize(size_t(limit_) + 8);
  uint8_t* const base = out.data.data();
  uint8_t* w = base;
  uint8_t* const full = base + limit_;
  uint32_t crc = 0xffffffffu;
  uint64_t in_bytes = 0;
  // Every block starts with no run pending: the byte that closed the previous block
  // was left unconsumed and starts this block's first run.
  int ch = -1, len = 0;
  bool cut = false;
  while (!cut) {
    if (pos_ == end_ && !refill()) break;
    const uint8_t* p = buf_.data() + pos_;
    const uint8_t* const e = buf_.data() + end_;
    const uint8_t* const seg = p;
    while (p < e) {
      uint8_t b = *p;
      if (b == ch && len < 255) {
        len++;
        p++;
        continue;
      }
      if (len > 0) {
        w = put_run(w, uint8_t(ch), len);
        if (w >= full) {
          // bzip2 closes the block as soon as a written run fills it; byte b starts
          // the next block's first run.
          cut = true;
          len = 0;
          break;
        }
      }
      ch = b;
      len = 1;
      p++;
    }
    crc = crc32_update(crc, seg, size_t(p - seg));
    in_bytes += uint64_t(p - seg);
    pos_ = size_t(p - buf_.data());
  }
  if (!cut && len > 0) {  // end of input: the pending run closes the last block
    w = put_run(w, uint8_t(ch), len);
    len = 0;
  }
  if (w == base) return false;
  out.data.resize(size_t(w - base));
  out.crc = ~crc;
  out.index = next_index_++;
  out.input_bytes = in_bytes;
  return true;
}

}  // namespace gpbzip2
