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

void ByteBuffer::release() noexcept {
  if (cap_ >= kMappedFrom)
    unmap_huge_pages(p_, cap_);
  else
    delete[] p_;
  p_ = nullptr;
  cap_ = 0;
}

void ByteBuffer::reserve(size_t n, size_t keep) {
  if (n <= cap_) return;
  if (cap_ >= kMappedFrom) {  // a mapping moves with all its bytes
    void* const p = mremap(p_, whole_small_pages(cap_), whole_small_pages(n), MREMAP_MAYMOVE);
    if (p == MAP_FAILED) throw std::bad_alloc();
    p_ = static_cast<uint8_t*>(p);
  } else {
    uint8_t* const p =
        n < kMappedFrom ? new uint8_t[n] : static_cast<uint8_t*>(map_huge_pages(n));
    if (keep > 0) std::memcpy(p, p_, keep);
    release();
    p_ = p;
  }
  cap_ = n;
}

BlockReader::BlockReader(Source& src, int level, size_t region_bytes)
    : src_(src), limit_(format::block_limit(level)), region_bytes_(std::max<size_t>(region_bytes, 1)) {}

void BlockReader::start_scouts(int count) {
  if (count <= 0 || scouting_) return;
  scouting_ = true;
  {
    std::lock_guard lk(mu_);
    // The reader holds the regions from the block's current position to a block's worth
    // past it; the scouts may read one more each.
    max_loaded_ = (size_t(limit_) + 4) / region_bytes_ + 3 + size_t(count);
    next_load_ = next_take_;
    read_done_ = input_end_;
  }
  for (int i = 0; i < count; i++) scouts_.emplace_back([this] { scout(); });
}

BlockReader::~BlockReader() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  room_cv_.notify_all();
  for (auto& t : scouts_) t.join();
}

// The next region of the input, in input order (so under read_mu_ where scouts read):
// whole for the scouts (a file), as much as one read gives for the reader itself (a pipe:
// blocks go on as the input comes, however it stalls).
std::unique_ptr<BlockReader::Region> BlockReader::load() {
  auto r = std::make_unique<Region>();
  r->begin = read_pos_;
  {
    std::lock_guard lk(mu_);
    if (!spare_.empty()) {
      r->data = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  if (!r->data) r->data.reset(new uint8_t[region_bytes_]);
  try {
    while (r->size < region_bytes_) {
      const size_t got = src_.read(r->data.get() + r->size, region_bytes_ - r->size);
      if (got == 0) {
        r->last_region = true;
        break;
      }
      r->size += got;
      if (!scouting_) break;
    }
  } catch (...) {
    r->error = std::current_exception();
    r->last_region = true;
  }
  read_pos_ += r->size;
  return r;
}

// The runs of four or more equal bytes wholly inside the region, and the equal bytes it
// starts and ends with (a run that may go on in the regions beside it, of any length).
void BlockReader::scan(Region& r) const {
  if (r.size == 0) return;
  const uint8_t* const d = r.data.get();
  const size_t n = r.size;
  r.first = d[0];
  r.last = d[n - 1];
  r.lead = run_length(d, d + n, d[0]);
  if (r.lead == n) {
    r.tail = n;
    return;
  }
  r.tail = 1;
  while (d[n - 1 - r.tail] == d[n - 1]) r.tail++;
  const uint8_t* p = d + r.lead;
  const uint8_t* const e = d + n - r.tail;
  while (e - p >= 4) {
    const uint8_t* const run = find_run4(p, e - 3);
    if (run == e - 3) break;
    p = run + 4 + run_length(run + 4, e, *run);
    r.runs.push_back({r.begin + uint64_t(run - d), r.begin + uint64_t(p - d)});
  }
}

void BlockReader::scout() {
  for (;;) {
    std::unique_ptr<Region> r;
    uint64_t index;
    {
      std::unique_lock rl(read_mu_);
      {
        std::unique_lock lk(mu_);
        room_cv_.wait(lk, [&] { return stop_ || read_done_ || loaded_ < max_loaded_; });
        if (stop_ || read_done_) return;
        loaded_++;
        index = next_load_++;
      }
      r = load();
      if (r->last_region) {
        std::lock_guard lk(mu_);
        read_done_ = true;
      }
    }
    room_cv_.notify_all();  // the next read may start (or, at the end, the scouts leave)
    scan(*r);
    {
      std::lock_guard lk(mu_);
      ready_[index] = std::move(r);
    }
    ready_cv_.notify_all();
  }
}

std::unique_ptr<BlockReader::Region> BlockReader::take(uint64_t index) {
  if (!scouting_) {
    {
      std::lock_guard lk(mu_);
      loaded_++;
    }
    auto r = load();
    scan(*r);
    return r;
  }
  std::unique_lock lk(mu_);
  ready_cv_.wait(lk, [&] { return ready_.count(index) > 0; });
  auto it = ready_.find(index);
  std::unique_ptr<Region> r = std::move(it->second);
  ready_.erase(it);
  return r;
}

void BlockReader::release(Region& r) {
  {
    std::lock_guard lk(mu_);
    spare_.push_back(std::move(r.data));
    loaded_--;
  }
  room_cv_.notify_one();
}

void BlockReader::close_run(uint64_t begin, uint64_t end) {
  if (end - begin >= 4) runs_.push_back({begin, end});
}

// The next region joins the runs: its first bytes may go on the run that reached the end
// of the one before, and its last bytes may start one.
void BlockReader::merge_next() {
  std::unique_ptr<Region> r = take(next_take_++);
  if (r->error) std::rethrow_exception(r->error);
  const uint64_t begin = r->begin;
  const bool uniform = r->size > 0 && r->lead == r->size;
  if (r->size > 0) {
    if (open_ && open_byte_ == r->first) {
      if (!uniform) close_run(open_begin_, begin + r->lead);
    } else {
      if (open_) close_run(open_begin_, begin);
      if (!uniform) close_run(begin, begin + r->lead);
      open_begin_ = begin;
    }
    open_ = true;
    open_byte_ = r->last;
    if (!uniform) {
      runs_.insert(runs_.end(), r->runs.begin(), r->runs.end());
      open_begin_ = r->end() - r->tail;
    }
  }
  frontier_ = r->end();
  if (r->last_region) {
    input_end_ = true;
    if (open_) close_run(open_begin_, frontier_);
    open_ = false;
  }
  if (uniform) release(*r);  // its first byte stands for all of them
  held_.push_back(std::move(r));
}

uint8_t BlockReader::byte(uint64_t at) const {
  for (const auto& r : held_)
    if (at < r->end()) return r->data ? r->data[at - r->begin] : r->first;
  throw Error(ErrorKind::Internal, "block reader: byte past what is read");
}

// The current block's bytes up to `at` into its buffer; the regions wholly before `at`
// are done with.
void BlockReader::copy_upto(uint64_t at, RawBlock& out) {
  const uint64_t start = consumed_;
  ByteBuffer& buf = out.buffer;
  // A block of no long runs holds about the limit's bytes: room for that at once, more
  // by doubling.
  if (at - start > buf.capacity()) {
    const size_t grown = buf.capacity() > 0 ? 2 * buf.capacity() : size_t(limit_) + 4;
    buf.reserve(std::max<size_t>(size_t(at - start), grown), size_t(copied_ - start));
  }
  for (const auto& r : held_) {
    if (copied_ >= at) break;
    if (r->end() <= copied_) continue;
    const uint64_t to = std::min(at, r->end());
    uint8_t* const dst = buf.data() + (copied_ - start);
    if (r->data)
      std::memcpy(dst, r->data.get() + (copied_ - r->begin), size_t(to - copied_));
    else
      std::memset(dst, r->first, size_t(to - copied_));
    copied_ = to;
  }
  while (!held_.empty() && held_.front()->end() <= at) {
    if (held_.front()->data) release(*held_.front());
    held_.pop_front();
  }
}

// bzip2 writes runs of 1 to 3 bytes as they are, four or more as four and a count, and
// closes a block when a run written fills it; the byte that ended that run starts the next
// block. So the encoded size is counted, not written: literal stretches count one for one,
// each run piece (up to 255 bytes of a run) five.
bool BlockReader::next(RawBlock& out) {
  const uint64_t start = consumed_;
  copied_ = start;
  const size_t full = size_t(limit_);
  size_t w = 0;  // encoded size so far
  uint64_t cur = start;
  bool runs = false;
  for (;;) {
    const size_t room = full - w;
    // A run with under four bytes left from here on is literal bytes now.
    while (!runs_.empty() && runs_.front().end < cur + 4) runs_.pop_front();
    // Merged far enough: to the next run that could matter, and to the bytes a cut in a
    // literal stretch looks at.
    if (runs_.empty() && !input_end_ &&
        (frontier_ < cur + room + 3 || (open_ && open_begin_ < cur + room))) {
      copy_upto(cur, out);
      merge_next();
      continue;
    }
    const uint64_t run_begin = runs_.empty() ? UINT64_MAX : std::max(runs_.front().begin, cur);
    if (run_begin - cur >= room || runs_.empty()) {
      if (input_end_ && frontier_ - cur < room && run_begin == UINT64_MAX) {
        w += size_t(frontier_ - cur);
        cur = frontier_;
        break;
      }
      // The block fills inside the literal stretch: at the end of the short run that
      // crosses the limit.
      uint64_t cut = cur + room;
      while (cut < frontier_ && byte(cut) == byte(cut - 1)) cut++;
      w += size_t(cut - cur);
      cur = cut;
      break;
    }
    w += size_t(run_begin - cur);
    cur = std::min(runs_.front().end, run_begin + 255);
    w += 5;
    runs = true;
    if (w >= full) break;
  }
  if (w == 0) return false;
  copy_upto(cur, out);
  out.index = next_index_++;
  out.input_bytes = cur - start;
  out.rle_bytes = w;
  out.has_runs = runs;
  consumed_ = cur;
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
