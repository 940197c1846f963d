// Decompression pipeline: block finder -> decode queue -> stations -> checker. The
// calling thread reads the input as it is needed, scans it for block magics at every bit
// offset and submits each candidate block to the decode stations (CPU threads; a GPU
// station inverts the BWT of batches of blocks); it then takes the results in input
// order and trusts a block only when it starts exactly where the previous trusted block
// ended (the first one right after the stream header), decoded completely and matches
// its CRC. Magics that compressed data contains by chance are decoded too and thrown
// away, never written.
#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "block_scanner.h"
#include "common/bit_reader.h"
#include "common/byte_vector.h"
#include "common/cpu_count.h"
#include "common/crc32.h"
#include "common/format.h"
#include "common/gpu.h"
#include "decode_queue.h"
#include "decode_station.h"
#include "gpbzip2.h"
#include "output_writer.h"

namespace gpbzip2 {

namespace {

constexpr size_t kReadChunk = size_t(256) << 10;
// Bytes of input kept ahead per block in flight: about one compressed block.
constexpr size_t kReadAheadPerBlock = size_t(1) << 20;
// Dead input bytes collected before they are dropped. Dropping moves the live bytes, so
// it waits until there are a quarter as many dead ones: each byte is moved about four
// times at most, however many blocks are in flight.
constexpr size_t kDiscardStep = size_t(256) << 10;
// More bytes than any block bzip2 accepts can take (18002 selectors of 50 codes of at
// most 20 bits, plus tables); a block running longer is corrupt.
constexpr size_t kMaxBlockSpan = size_t(3) << 20;
// Blocks in flight that GPU stations may add (two batches a lane), for sizing the input
// window.
constexpr size_t kGpuBlocksInFlight = 256;

// The input from the block being checked onwards.
class InputWindow {
 public:
  // `most`: the bytes it is expected to hold at most, reserved so that growing never
  // copies, nor leaves the old buffer behind in the heap. Only the bytes used are touched.
  InputWindow(Source& src, size_t most) : src_(src) { expect(most); }
  void expect(size_t most) { buf_.reserve(most); }
  uint64_t begin() const { return base_; }
  uint64_t end() const { return base_ + buf_.size(); }
  bool eof() const { return eof_; }
  const uint8_t* at(uint64_t offset) const { return buf_.data() + (offset - base_); }

  // Appends up to kReadChunk bytes (pipes give less per read); false at the end.
  bool read_more() {
    if (eof_) return false;
    const size_t old = buf_.size();
    buf_.resize(old + kReadChunk);
    size_t n = 0;
    while (n < kReadChunk) {
      const size_t k = src_.read(buf_.data() + old + n, kReadChunk - n);
      if (k == 0) {
        eof_ = true;
        break;
      }
      n += k;
    }
    buf_.resize(old + n);
    return n > 0;
  }
  // Forgets bytes before `offset`, in steps large enough that the copying stays cheap.
  void discard_before(uint64_t offset) {
    const size_t dead = size_t(offset - base_);
    if (dead < kDiscardStep || 4 * dead < buf_.size() - dead) return;
    buf_.erase(buf_.begin(), buf_.begin() + ptrdiff_t(dead));
    base_ = offset;
  }

 private:
  Source& src_;
  ByteVector buf_;
  uint64_t base_ = 0;
  bool eof_ = false;
};

// Opening a GPU costs about 0.45 s of wall time however little it then does, so
// GpuMode::Auto opens one only for inputs that the CPU stations alone would take longer
// than kGpuWorthSeconds on, taking a CPU thread to decode about kCpuBytesPerSecond of
// compressed input: 13 MB/s a thread on silesia-7x16 from -9 with 16 threads (H100 host)
// and 32 (2 x H200 host), where the GPU lost at 32 threads (0.72-0.74 s against 0.54-0.56
// off) and won at 16 (0.81-0.89 s against 0.96-1.24). From a pipe it opens once a quarter
// of that is read, as compression does: 231 MB of compressed input then took 0.91 s
// against 1.23 off, but 58 MB 0.40 against 0.32, waiting for the driver's start; a half
// or the whole lost more than it saved (kernels/NOTES.md, session 18).
constexpr double kGpuWorthSeconds = 0.8;
constexpr double kCpuBytesPerSecondPerThread = 13e6;

// Blocks out at the stations at once. Two per thread leave slack where block times vary;
// one station overlaps only with the checker writing, for which one block ahead is
// enough, and each block held costs its output's memory.
size_t blocks_in_flight(int threads) { return threads == 1 ? 2 : 2 * size_t(threads) + 2; }

// Address space for station_count: a station maps up to 12 MB besides its stack whatever
// the level (the decoder's array, its work pages, its share of the input window and of the
// blocks in flight). Under ulimit -v on a 2-core Xeon VM one station needed 22 MB, each
// more 11 (1 MiB stacks).
constexpr uint64_t kStationAddressSpace = uint64_t(12) << 20;
constexpr uint64_t kSharedAddressSpace = uint64_t(16) << 20;

uint64_t gpu_after(const DecompressOptions& opts, int threads) {
  const auto worth = uint64_t(double(threads) * kCpuBytesPerSecondPerThread * kGpuWorthSeconds);
  if (opts.gpu == GpuMode::On) return 0;
  if (opts.gpu == GpuMode::Off || (opts.input_size > 0 && opts.input_size < worth))
    return std::numeric_limits<uint64_t>::max();
  return opts.input_size > 0 ? 0 : worth / 4;
}

class Decompressor {
 public:
  Decompressor(Source& in, Sink* out, const DecompressOptions& opts)
      : out_(out),
        opts_(opts),
        threads_(station_count(opts.threads, kStationAddressSpace, kSharedAddressSpace)),
        queue_(blocks_in_flight(threads_)),
        window_(in, window_bytes(0)),
        gpu_after_(gpu_after(opts, threads_)),
        scratch_(new uint8_t[kPiece]) {
    // The writer keeps a few blocks queued: enough to take a GPU batch's worth as it
    // comes back, few enough to bound the memory when the output is slow. With one
    // station the checker has time to write itself, and each block held costs memory.
    if (out_) writer_.emplace(*out_, pages_, size_t(threads_ / 2), opts.progress);
  }

  ~Decompressor() {
    queue_.stop();
    for (auto& t : gpu_stations_) t.join();
    for (auto& t : stations_) t.join();
  }

  DecompressTotals run() {
    if (!start_stream(0, true)) return totals_;
    for (;;) {
      while (!cands_.empty() && cands_.front().bit < expected_) pop_candidate();
      if (cands_.empty()) {
        // Scanning has passed expected_ without a magic there: do not read on.
        if (scanned_ > expected_ / 8 && expected_ + 48 <= window_.end() * 8)
          corrupt_block("no block header where the previous block ends");
        if (scan_more()) continue;
        if (expected_ + 48 > window_.end() * 8) truncated();
        corrupt_block("no block header where the previous block ends");
      }
      if (cands_.front().bit > expected_)
        corrupt_block("no block header where the previous block ends");
      if (cands_.front().end_of_stream) {
        const bool more = end_stream();
        pop_candidate();
        if (!more) break;
        continue;
      }
      if (!cands_.front().task && lone_block()) {
        // Nothing for a station to overlap it with: decoded here, and no thread started.
        DecodeTask t;
        fill_task(t, expected_, window_.end());
        if (!local_) local_ = std::make_unique<BlockDecoder>();
        decode_here(t, *local_, pages_, scratch_.get());
        accept_block(t);
        pop_candidate();
        continue;
      }
      fill_pipeline();
      if (!cands_.front().task) {
        while (!dispatchable(0)) scan_more();
        dispatch(0);
        dispatched_ = 1;
      }
      TaskPtr t = cands_.front().task;
      queue_.wait(*t);
      accept_block(*t);
      pop_candidate();
    }
    if (writer_) totals_.bytes_out = writer_->finish();
    return totals_;
  }

 private:
  struct Candidate {
    uint64_t bit;  // from the start of the input
    bool end_of_stream;
    TaskPtr task;
  };

  [[noreturn]] void corrupt_block(const char* why) const {
    throw Error(ErrorKind::Corrupt, "data integrity error in block " + std::to_string(blocks_ + 1) +
                                        " (bit offset " + std::to_string(expected_) + "): " + why);
  }
  [[noreturn]] static void truncated() {
    throw Error(ErrorKind::Truncated, "compressed file ends unexpectedly");
  }

  // Reads one more piece of input and scans what became scannable. False once the whole
  // input has been read and scanned.
  bool scan_more() {
    const bool got = window_.read_more();
    // A magic needs 7 bytes from its first byte on; the last 6 wait for more input.
    const uint64_t to = window_.eof() ? window_.end() : std::max<uint64_t>(window_.end(), 6) - 6;
    if (to <= scanned_) return got;
    hits_.clear();
    const uint64_t base = window_.begin();
    scan_for_magic(window_.at(base), size_t(window_.end() - base), size_t(scanned_ - base),
                   size_t(to - base), hits_);
    for (const MagicHit& h : hits_) cands_.push_back({base * 8 + h.bit, h.end_of_stream, nullptr});
    scanned_ = to;
    return true;
  }

  void pop_candidate() {
    Candidate& c = cands_.front();
    if (c.task) {
      c.task->cancelled = true;
      in_flight_--;
    }
    cands_.pop_front();
    if (dispatched_ > 0) dispatched_--;
    window_.discard_before(std::min(expected_ / 8, scanned_));
  }

  // The input window's size for the blocks in flight: live input, and a quarter as much
  // dead before it is dropped. The GPU's share is reserved only once a GPU is found:
  // reserved from the start it was some 330 MB of address space for any input, and where
  // that is limited (ulimit -v, as batch schedulers set) a 1 kB file failed to decompress;
  // reserved when the GPU was looked for, a CPU-only build failed there on inputs of over
  // 17 MB.
  size_t window_bytes(size_t gpu_blocks) const {
    return 5 * ((queue_.max_in_flight() + gpu_blocks) * kReadAheadPerBlock + kMaxBlockSpan +
                kReadChunk) / 4 + kDiscardStep;
  }

  // Where the system gives no more threads (an address-space limit holds their stacks),
  // the stations started go on alone; without one, memory has run out.
  void start_station() {
    if (!start_station_thread(stations_, [this] { run_decode_station(queue_, pages_); }))
      threads_ = int(stations_.size());
  }

  // The rest of the input is this block and its stream's end (a small file), read and
  // scanned. (--gpu=on must open the GPU: its blocks go the usual way.)
  bool lone_block() const {
    return window_.eof() && scanned_ == window_.end() && cands_.size() == 2 &&
           cands_[1].end_of_stream && opts_.gpu != GpuMode::On;
  }

  // A block can go to a worker once its input is in: up to the next candidate, else the
  // span limit or the end of the input.
  bool dispatchable(size_t k) const {
    return k + 1 < cands_.size() || window_.eof() ||
           window_.end() >= cands_[k].bit / 8 + kMaxBlockSpan;
  }

  void dispatch(size_t k) {
    auto t = std::make_shared<DecodeTask>();
    const uint64_t bit = cands_[k].bit, first = bit / 8;
    uint64_t last = std::min<uint64_t>(window_.end(), first + kMaxBlockSpan);
    if (k + 1 < cands_.size() && (cands_[k + 1].bit + 7) / 8 < last) {
      last = (cands_[k + 1].bit + 7) / 8;
      t->cut_short = true;
    }
    fill_task(*t, bit, last);
    cands_[k].task = t;
    in_flight_++;
    queue_.submit(std::move(t));
    // A station starts with each block handed out until there are `threads`: a small
    // input starts no more threads than it can use. The GPU opens with the first.
    if (stations_.size() < size_t(threads_)) start_station();
    if (!gpu_started_ && (opts_.gpu == GpuMode::On || window_.end() >= gpu_after_)) {
      gpu_started_ = true;
      GpuStations gpu = start_gpu_decode_stations(queue_, opts_);
      gpu_stations_ = std::move(gpu.threads);
      must_open_ = std::move(gpu.must_open);
    }
    // Once a GPU is found, before its lanes open (which takes a while).
    if (!gpu_window_ && queue_.gpu_found()) {
      gpu_window_ = true;
      window_.expect(window_bytes(kGpuBlocksInFlight));
    }
  }

  // The task for the block whose magic is at `bit`, with the input up to byte `last`.
  void fill_task(DecodeTask& t, uint64_t bit, uint64_t last) {
    const uint64_t first = bit / 8;
    t.first_byte = first;
    t.bit = bit - first * 8;
    t.size = size_t(last - first);
    t.data.resize(t.size + 8);
    std::memcpy(t.data.data(), window_.at(first), t.size);
    std::memset(t.data.data() + t.size, 0, 8);
    t.reaches_eof = window_.eof() && last == window_.end();
    t.keep_output = out_ != nullptr;
  }

  // Keeps the workers busy: hands out the candidates after the block being checked,
  // reading ahead as far as that takes.
  void fill_pipeline() {
    const size_t max_in_flight = queue_.max_in_flight();
    while (in_flight_ < max_in_flight) {
      while (dispatched_ < cands_.size() &&
             (cands_[dispatched_].end_of_stream || cands_[dispatched_].bit < expected_))
        dispatched_++;
      if (dispatched_ < cands_.size() && dispatchable(dispatched_)) {
        dispatch(dispatched_);
        dispatched_++;
        continue;
      }
      if (window_.end() - expected_ / 8 > max_in_flight * kReadAheadPerBlock + kMaxBlockSpan)
        return;
      if (cands_.size() > 4 * max_in_flight) return;  // input full of false magics
      if (!scan_more()) return;
    }
  }

  void accept_block(DecodeTask& t) {
    // GpuMode::On: no output, nor a verdict on a block, before a GPU lane has opened.
    if (must_open_) {
      must_open_->wait_usable();
      must_open_.reset();
    }
    if (t.error) std::rethrow_exception(t.error);
    if (t.status == BlockDecoder::Status::OutOfInput && t.cut_short) {
      // The next candidate lay inside this block: decode it here with all its input.
      const uint64_t first = t.first_byte;
      while (window_.end() < first + kMaxBlockSpan && scan_more()) {
      }
      DecodeTask full;
      fill_task(full, expected_, std::min<uint64_t>(window_.end(), first + kMaxBlockSpan));
      if (!local_) local_ = std::make_unique<BlockDecoder>();
      decode_here(full, *local_, pages_, scratch_.get());
      return accept_block(full);
    }
    if (t.status == BlockDecoder::Status::OutOfInput) {
      if (t.reaches_eof) truncated();
      corrupt_block("block longer than any valid block");
    }
    if (t.status == BlockDecoder::Status::Corrupt) corrupt_block(t.why);
    if (t.block_bytes > uint32_t(100000 * level_))
      corrupt_block("block larger than the stream's block size");
    if (t.crc != t.stored_crc) corrupt_block("block CRC mismatch");

    stream_crc_ = combine_stream_crc(stream_crc_, t.crc);
    expected_ = t.first_byte * 8 + t.end_bit;
    blocks_++;
    totals_.bytes_in = expected_ / 8;
    if (writer_) {
      writer_->add({std::move(t.out), std::move(t.text), t.out_bytes, totals_.bytes_in});
    } else {
      totals_.bytes_out += t.out_bytes;
      if (opts_.progress) opts_.progress(totals_.bytes_in, totals_.bytes_out);
    }
  }

  // Checks the stream CRC after the end-of-stream magic at expected_; then looks for the
  // next stream. False when there is none.
  bool end_stream() {
    const uint64_t crc_end = expected_ + 48 + 32;
    while (window_.end() * 8 < crc_end && scan_more()) {
    }
    if (window_.end() * 8 < crc_end) truncated();
    uint8_t bytes[24] = {};
    const uint64_t first = expected_ / 8;
    std::memcpy(bytes, window_.at(first), size_t(std::min<uint64_t>(16, window_.end() - first)));
    BitReader br(bytes, 16, expected_ - first * 8 + 48);
    if (br.get(32) != stream_crc_)
      throw Error(ErrorKind::Corrupt, "data integrity error: stream CRC mismatch (stream " +
                                          std::to_string(totals_.streams + 1) + ", bit offset " +
                                          std::to_string(expected_) + ")");
    totals_.streams++;
    totals_.bytes_in = (crc_end + 7) / 8;
    return start_stream((crc_end + 7) / 8, false);
  }

  // Reads a stream header at byte `at`. False at the end of the input or before trailing
  // garbage. bzip2 calls a file that ends inside a header truncated.
  bool start_stream(uint64_t at, bool first) {
    while (window_.end() < at + 4 && scan_more()) {
    }
    const size_t avail = size_t(std::min<uint64_t>(4, window_.end() - at));
    const uint8_t* p = window_.at(at);
    if (avail == 4 && p[0] == 'B' && p[1] == 'Z' && p[2] == 'h' && p[3] >= '1' && p[3] <= '9') {
      level_ = p[3] - '0';
      expected_ = (at + 4) * 8;
      stream_crc_ = 0;
      return true;
    }
    if (avail == 0 && !first) return false;
    if (avail < 4 && (avail == 0 || std::memcmp(p, "BZh", avail) == 0)) truncated();
    if (first) throw Error(ErrorKind::NotBzip2, "not a bzip2 file");
    totals_.trailing_garbage = true;
    return false;
  }

  Sink* out_;
  const DecompressOptions& opts_;
  int threads_;
  DecodeQueue queue_;
  InputWindow window_;
  uint64_t gpu_after_;  // input bytes read before a GPU station opens
  bool gpu_started_ = false;
  bool gpu_window_ = false;  // the window holds room for the GPU's blocks
  std::shared_ptr<GpuGate> must_open_;  // GpuMode::On until a lane has opened
  std::vector<std::thread> stations_, gpu_stations_;
  PagePool pages_;
  // After pages_, whose pages it gives back, and before the stations' threads end.
  std::optional<OutputWriter> writer_;
  std::unique_ptr<uint8_t[]> scratch_;  // touched only if used
  std::unique_ptr<BlockDecoder> local_;

  std::deque<Candidate> cands_;  // found, not yet checked, in input order
  size_t dispatched_ = 0;        // cands_[0, dispatched_) are handed out or need no worker
  size_t in_flight_ = 0;         // tasks handed out for candidates still in cands_
  uint64_t scanned_ = 0;         // input bytes scanned for magics
  std::vector<MagicHit> hits_;

  uint64_t expected_ = 0;  // bit where the next block or end-of-stream magic must start
  int level_ = 9;
  uint32_t stream_crc_ = 0;
  uint64_t blocks_ = 0;  // blocks trusted so far
  DecompressTotals totals_;
};

}  // namespace

DecompressTotals decompress_stream(Source& in, Sink* out, const DecompressOptions& opts) {
  Decompressor d(in, out, opts);
  return d.run();
}

}  // namespace gpbzip2
