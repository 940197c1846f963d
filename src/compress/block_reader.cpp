#include "block_reader.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <system_error>

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

// The running CRC through the bytes an encoding stands for: its literal bytes as they
// are, and each run piece (four equal bytes and a count) as the 4 + count bytes it
// stands for.
uint32_t crc_of_encoding(uint32_t crc, const uint8_t* p, size_t n) {
  const uint8_t* const e = p + n;
  while (e - p >= 5) {
    const uint8_t* const run = find_run4(p, e - 4);
    crc = crc32_update(crc, p, size_t(run - p));
    p = run;
    if (run == e - 4) break;
    crc = crc32_run(crc, *run, 4 + size_t(run[4]));
    p = run + 5;
  }
  return crc32_update(crc, p, size_t(e - p));
}

// bzip2's first run-length encoding of in[0, n), to out; returns its size.
size_t encode(const uint8_t* in, size_t n, uint8_t* out) {
  const uint8_t* p = in;
  const uint8_t* const e = p + n;
  size_t w = 0;
  while (e - p >= 4) {
    const uint8_t* run = find_run4(p, e - 3);
    std::memcpy(out + w, p, size_t(run - p));
    w += size_t(run - p);
    p = run;
    if (run == e - 3) break;
    const uint8_t c = *run;
    p = run + 4 + run_length(run + 4, e - run > 255 ? run + 255 : e, c);
    std::memset(out + w, c, 4);
    out[w + 4] = uint8_t(p - run - 4);
    w += 5;
  }
  std::memcpy(out + w, p, size_t(e - p));
  return w + size_t(e - p);
}

}  // namespace

BlockReader::BlockReader(Source& src, int level, size_t region_bytes)
    : src_(src), limit_(format::block_limit(level)), region_bytes_(std::max<size_t>(region_bytes, 1)) {}

void BlockReader::start_scouts(int count) {
  if (count <= 0 || scouting_) return;
  scouting_ = true;
  reader_reads_ = !src_.positional();
  {
    std::lock_guard lk(mu_);
    // The reader holds the regions from the block's current position to a block's worth
    // past it; the scouts may read one more each.
    max_loaded_ = (size_t(limit_) + 4) / region_bytes_ + 3 + size_t(count);
    next_load_ = scout_first_ = next_take_;
    scout_begin_ = read_pos_;
    read_done_ = input_end_;
  }
  // Where the system gives no more threads, fewer scouts; with none, the reader reads.
  try {
    for (int i = 0; i < count; i++)
      scouts_.emplace_back([this] { reader_reads_ ? scout_reads_of_reader() : scout(); });
  } catch (const std::system_error&) {
    if (scouts_.empty()) scouting_ = reader_reads_ = false;
  }
}

BlockReader::~BlockReader() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  room_cv_.notify_all();
  scan_cv_.notify_all();
  for (auto& t : scouts_) t.join();
}

// A region from `begin`, its buffer a spare one where the blocks have given one back.
std::unique_ptr<BlockReader::Region> BlockReader::new_region(uint64_t begin) {
  auto r = std::make_unique<Region>();
  r->begin = begin;
  std::unique_ptr<uint8_t[]> buffer;
  {
    std::lock_guard lk(spare_->mu);
    if (!spare_->buffers.empty()) {
      buffer = std::move(spare_->buffers.back());
      spare_->buffers.pop_back();
    }
  }
  if (!buffer) buffer.reset(new uint8_t[region_bytes_]);
  r->data = std::shared_ptr<uint8_t>(buffer.release(), [spares = spare_](uint8_t* p) {
    std::unique_ptr<uint8_t[]> back(p);
    std::lock_guard lk(spares->mu);
    spares->buffers.push_back(std::move(back));
  });
  return r;
}

// The reader's next region: as much as one read gives (a pipe: blocks go on as the input
// comes, however it stalls).
std::unique_ptr<BlockReader::Region> BlockReader::load() {
  std::unique_ptr<Region> r = new_region(read_pos_);
  try {
    r->size = src_.read(r->data.get(), region_bytes_);
    r->last_region = r->size == 0;
  } catch (...) {
    r->error = std::current_exception();
    r->last_region = true;
  }
  read_pos_ += r->size;
  return r;
}

// A scout's region `index`, whole but for the input's last: read at its offset, while
// other scouts read theirs.
std::unique_ptr<BlockReader::Region> BlockReader::load_at(uint64_t index) {
  std::unique_ptr<Region> r = new_region(scout_begin_ + (index - scout_first_) * region_bytes_);
  try {
    while (r->size < region_bytes_) {
      const size_t got = src_.read_at(r->begin + r->size, r->data.get() + r->size,
                                      region_bytes_ - r->size);
      if (got == 0) {
        r->last_region = true;
        break;
      }
      r->size += got;
    }
  } catch (...) {
    r->error = std::current_exception();
    r->last_region = true;
  }
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

void BlockReader::scout_failed(std::exception_ptr error) {
  {
    std::lock_guard lk(mu_);
    if (!scout_error_) scout_error_ = error;
    stop_ = true;
  }
  room_cv_.notify_all();
  scan_cv_.notify_all();
  ready_cv_.notify_all();
}

// A scout reading a file: regions taken in turn, each read and searched while the other
// scouts read and search theirs. The reader takes them in order; a region past the
// input's last (read as the input ended, or if it grows) is never taken.
void BlockReader::scout() try {
  for (;;) {
    uint64_t index;
    {
      std::unique_lock lk(mu_);
      room_cv_.wait(lk, [&] { return stop_ || read_done_ || loaded_ < max_loaded_; });
      if (stop_ || read_done_) return;
      loaded_++;
      index = next_load_++;
    }
    std::unique_ptr<Region> r = load_at(index);
    if (r->last_region) {
      {
        std::lock_guard lk(mu_);
        read_done_ = true;
      }
      room_cv_.notify_all();  // the scouts leave
    }
    scan(*r);
    {
      std::lock_guard lk(mu_);
      ready_[index] = std::move(r);
    }
    ready_cv_.notify_all();
  }
} catch (...) {
  scout_failed(std::current_exception());
}

// A scout beside a reader that reads (a pipe): searches the regions it read, in order.
void BlockReader::scout_reads_of_reader() try {
  for (;;) {
    std::unique_lock lk(mu_);
    scan_cv_.wait(lk, [&] { return stop_ || !to_scan_.empty(); });
    if (stop_) return;
    auto [index, r] = std::move(to_scan_.front());
    to_scan_.pop_front();
    lk.unlock();
    scan(*r);
    lk.lock();
    ready_[index] = std::move(r);
    lk.unlock();
    ready_cv_.notify_all();
  }
} catch (...) {
  scout_failed(std::current_exception());
}

// From a pipe: reads up to two regions a scout past region `index` (a pipe's reads give
// up to its buffer, 64 kB to 1 MiB), handing each to the scouts. Only the reader reads, as
// without scouts; a block may then wait for a little more input than it holds.
void BlockReader::read_ahead(std::unique_lock<std::mutex>& lk, uint64_t index) {
  const uint64_t last = index + 2 * scouts_.size() + 2;
  while (!stop_ && !read_done_ && next_load_ <= last) {
    loaded_++;
    const uint64_t at = next_load_++;
    lk.unlock();
    std::unique_ptr<Region> r = load();
    lk.lock();
    read_done_ = r->last_region;
    to_scan_.emplace_back(at, std::move(r));
    scan_cv_.notify_one();
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
  // After a scout's failure a pipe is read no further.
  if (scout_error_) std::rethrow_exception(scout_error_);
  if (reader_reads_) read_ahead(lk, index);
  ready_cv_.wait(lk, [&] { return ready_.count(index) > 0 || scout_error_; });
  auto it = ready_.find(index);
  if (it == ready_.end()) std::rethrow_exception(scout_error_);
  std::unique_ptr<Region> r = std::move(it->second);
  ready_.erase(it);
  return r;
}

void BlockReader::release(Region& r) {
  r.data.reset();  // back to the spares once no block refers to it either
  {
    std::lock_guard lk(mu_);
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
    if (at < r->end()) return r->data ? r->data.get()[at - r->begin] : r->first;
  throw Error(ErrorKind::Internal, "block reader: byte past what is read");
}

// The input's bytes [begin, end), all in held regions, to out. Returns the last region
// whose data it copied from, if any.
const BlockReader::Region* BlockReader::copy(uint64_t begin, uint64_t end, uint8_t* out) const {
  const Region* from = nullptr;
  for (const auto& r : held_) {
    if (begin >= end) break;
    if (r->end() <= begin) continue;
    const uint64_t to = std::min(end, r->end());
    if (r->data) {
      std::memcpy(out, r->data.get() + (begin - r->begin), size_t(to - begin));
      from = r.get();
    } else {
      std::memset(out, r->first, size_t(to - begin));
    }
    out += to - begin;
    begin = to;
  }
  return from;
}

// The input's bytes [begin, end), all in held regions, as pieces referring to them.
void BlockReader::refer(uint64_t begin, uint64_t end, std::vector<InputPiece>& pieces) const {
  for (const auto& r : held_) {
    if (begin >= end) break;
    if (r->end() <= begin) continue;
    const size_t n = size_t(std::min(end, r->end()) - begin);
    InputPiece* last = pieces.empty() ? nullptr : &pieces.back();
    if (r->data) {
      const uint8_t* const from = r->data.get() + (begin - r->begin);
      if (last && last->region == r->data && last->data + last->size == from)
        last->size += n;
      else
        pieces.push_back({r->data, from, n, 0});
    } else if (last && !last->region && last->fill == r->first) {
      last->size += n;
    } else {
      pieces.push_back({nullptr, nullptr, n, r->first});
    }
    begin += n;
  }
}

// A literal stretch before a run piece, to out: most are short and lie in the region the
// one before came from, where a call to memcpy costs more than the copy; the pieces of
// one long run have none between them.
void BlockReader::copy_stretch(uint64_t begin, uint64_t end, uint8_t* out) {
  const size_t n = size_t(end - begin);
  if (n == 0) return;
  const Region* const r = stretch_region_;
  if (!r || begin < r->begin || end > r->end() || n > 16) {
    if (const Region* from = copy(begin, end, out)) stretch_region_ = from;
    return;
  }
  const uint8_t* const in = r->data.get() + (begin - r->begin);
  if (n >= 8) {  // two 8-byte copies that overlap
    uint64_t a, b;
    std::memcpy(&a, in, 8);
    std::memcpy(&b, in + n - 8, 8);
    std::memcpy(out, &a, 8);
    std::memcpy(out + n - 8, &b, 8);
  } else {
    for (size_t i = 0; i < n; i++) out[i] = in[i];
  }
}

// The regions wholly before `at` are done with.
void BlockReader::release_before(uint64_t at) {
  while (!held_.empty() && held_.front()->end() <= at) {
    if (stretch_region_ == held_.front().get()) stretch_region_ = nullptr;
    if (held_.front()->data) release(*held_.front());
    held_.pop_front();
  }
}

// bzip2 writes runs of 1 to 3 bytes as they are, four or more as four and a count, and
// closes a block when a run written fills it; the byte that ended that run starts the next
// block. So the encoded size is counted: literal stretches count one for one, each run
// piece (up to 255 bytes of a run) five. The block's input is copied as it is, in one
// piece per region, for its station to encode; but once its runs have saved kMostSaved
// bytes, the rest of it is written encoded after what was copied: each literal stretch
// copied, each run piece written as its five bytes.
bool BlockReader::next(RawBlock& out) {
  const uint64_t start = consumed_;
  const size_t full = size_t(limit_);
  // Encoded, the block passes the limit by up to 4 bytes (a run piece); what is copied as
  // read adds the savings that let it stay so, and one run piece's.
  out.buffer.resize(full + kMostSaved + 254);
  uint8_t* const text = out.buffer.data();
  size_t w = 0;  // encoded size so far
  uint64_t cur = start;
  uint64_t copied = start;  // the input [start, copied) is in `text` as read
  out.pieces.clear();
  // A pipe's regions hold what one read gave, a few bytes at times, each in a region's
  // buffer: a block that kept them would keep megabytes; it gets a copy.
  auto copy_as_read = [&](uint64_t to) {
    if (scouting_ && !reader_reads_)
      refer(copied, to, out.pieces);
    else
      copy(copied, to, text + (copied - start));
    copied = to;
  };
  bool encoding = false;
  size_t at = 0;  // once encoding: where the next encoded byte goes
  bool runs = false;
  for (;;) {
    const size_t room = full - w;
    // A run with under four bytes left from here on is literal bytes now.
    while (!runs_.empty() && runs_.front().end < cur + 4) runs_.pop_front();
    // The next run: the first closed one, else the one that reaches frontier_ and may go
    // on, whose next piece is known once four of its bytes follow the piece (so a run of
    // any length, even an endless pipe of zeros, is cut into blocks as it comes).
    const Run* next = runs_.empty() ? nullptr : &runs_.front();
    Run open_run;
    if (!next && !input_end_) {
      const uint64_t open_at = std::max(open_begin_, cur);
      const bool open_known = open_ && open_at + 255 + 4 <= frontier_;
      // Merged far enough: to the next run that could matter, and to the bytes a cut in
      // a literal stretch looks at.
      if (frontier_ < cur + room + 3 || (open_ && open_at < cur + room && !open_known)) {
        if (!encoding) copy_as_read(cur);
        release_before(cur);
        merge_next();
        continue;
      }
      if (open_known) {
        open_run = {open_begin_, frontier_};
        next = &open_run;
      }
    }
    const uint64_t run_begin = next ? std::max(next->begin, cur) : UINT64_MAX;
    if (run_begin - cur >= room) {
      // The block ends with the input, or fills inside the literal stretch: at the end of
      // the short run that crosses the limit.
      uint64_t cut = frontier_;
      if (!input_end_ || frontier_ - cur >= room || run_begin != UINT64_MAX) {
        cut = cur + room;
        while (cut < frontier_ && byte(cut) == byte(cut - 1)) cut++;
      }
      if (encoding) copy(cur, cut, text + at);
      w += size_t(cut - cur);
      cur = cut;
      break;
    }
    w += size_t(run_begin - cur);
    const uint64_t piece_end = std::min(next->end, run_begin + 255);
    if (encoding) {
      copy_stretch(cur, run_begin, text + at);
      at += size_t(run_begin - cur);
      std::memset(text + at, byte(run_begin), 4);
      text[at + 4] = uint8_t(piece_end - run_begin - 4);
      at += 5;
    }
    cur = piece_end;
    w += 5;
    runs = true;
    if (w >= full) break;
    if (!encoding && cur - start > w + kMostSaved) {
      copy_as_read(cur);
      at = size_t(cur - start);
      encoding = true;
    }
  }
  if (!encoding) copy_as_read(cur);
  release_before(cur);
  if (w == 0) return false;
  out.index = next_index_++;
  out.input_bytes = cur - start;
  out.rle_bytes = w;
  out.has_runs = runs;
  out.as_read = runs ? size_t(copied - start) : 0;
  consumed_ = cur;
  rle_consumed_ += w;
  return true;
}

uint32_t finish_block(RawBlock& b, ByteVector& scratch) {
  uint8_t* const data = b.buffer.data();
  size_t at = 0;
  for (const InputPiece& p : b.pieces) {
    if (p.region)
      std::memcpy(data + at, p.data, p.size);
    else
      std::memset(data + at, p.fill, p.size);
    at += p.size;
  }
  b.pieces.clear();
  if (!b.has_runs) return ~crc32_update(0xffffffffu, data, b.rle_bytes);
  scratch.resize(b.buffer.size());
  const size_t w = encode(data, b.as_read, scratch.data());
  // The reader counted the block's size; the two must agree.
  if (w > b.rle_bytes) throw Error(ErrorKind::Internal, "block size after run-length coding");
  const size_t rest = b.rle_bytes - w;  // encoded by the reader
  uint32_t crc = crc32_update(0xffffffffu, data, b.as_read);
  crc = crc_of_encoding(crc, data + b.as_read, rest);
  std::memcpy(scratch.data() + w, data + b.as_read, rest);
  std::swap(b.buffer, scratch);
  b.as_read = 0;
  return ~crc;
}

}  // namespace gpbzip2
