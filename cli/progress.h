// The progress line on stderr: the share of the input read (when its size is known),
// input and output speed, time left.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace gpbzip2::cli {

class ProgressMeter {
 public:
  // `forced` (--progress) shows it from the start, anywhere: on a terminal as one line
  // redrawn in place, elsewhere (a log) as a line a second. Otherwise the meter shows only
  // on a terminal, without -q, and only once the work has run for a second: small jobs
  // never draw it. `total` is the input size in bytes, 0 when unknown.
  ProgressMeter(bool forced, bool noisy, std::string label, uint64_t total);
  ~ProgressMeter() { finish(); }
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // Called from a library thread with the totals so far: input read, output written.
  void update(uint64_t bytes_in, uint64_t bytes_out);
  // Wipes the line (and puts back an open -v line).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  enum class Mode { Off, Terminal, Lines };
  Mode mode_;
  bool forced_;
  std::string label_;
  uint64_t total_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
  bool drawn_ = false;
  size_t drawn_width_ = 0;  // Terminal: the widest line drawn, to wipe
  std::mutex mu_;
};

}  // namespace gpbzip2::cli
