#include "progress.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include "messages.h"

namespace gpbzip2::cli {

ProgressMeter::ProgressMeter(bool forced, bool noisy, std::string label, uint64_t total)
    : mode_(isatty(STDERR_FILENO) ? (forced || noisy ? Mode::Terminal : Mode::Off)
                                  : (forced ? Mode::Lines : Mode::Off)),
      forced_(forced),
      label_(std::move(label)),
      total_(total) {}

void ProgressMeter::update(uint64_t bytes_in, uint64_t bytes_out) {
  if (mode_ == Mode::Off) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!forced_ && elapsed < 1.0) return;
  // A terminal line is redrawn in place five times a second; a log gets a line a second.
  const auto every = mode_ == Mode::Terminal ? std::chrono::milliseconds(200) : std::chrono::seconds(1);
  if (drawn_ && now - last_draw_ < every) return;
  last_draw_ = now;
  drawn_ = true;

  // The same quantities both ways: the share of the input read, and both speeds (when
  // compressing the input is the larger, when decompressing the output).
  const double in_rate = elapsed > 0 ? double(bytes_in) / 1e6 / elapsed : 0.0;
  const double out_rate = elapsed > 0 ? double(bytes_out) / 1e6 / elapsed : 0.0;
  char text[256];
  int n;
  if (total_ > 0) {
    const double frac = std::min(1.0, double(bytes_in) / double(total_));
    const double left = in_rate > 0 ? (double(total_) - double(bytes_in)) / 1e6 / in_rate : 0.0;
    const long secs = long(left < 0 ? 0 : left);
    n = std::snprintf(text, sizeof text, "%5.1f%%, in %.1f MB/s, out %.1f MB/s, %ld:%02ld left",
                      100.0 * frac, in_rate, out_rate, secs / 60, secs % 60);
  } else {
    n = std::snprintf(text, sizeof text, "%.1f MB read, in %.1f MB/s, out %.1f MB/s",
                      double(bytes_in) / 1e6, in_rate, out_rate);
  }
  if (n < 0) return;
  if (mode_ == Mode::Lines) {
    progress_line(label_, text);
  } else {
    const std::string line = "  " + label_ + ": " + text;
    // Pads over a longer previous line; \r keeps the meter on one terminal line.
    std::fprintf(stderr, "\r%s%*s", line.c_str(),
                 int(drawn_width_ > line.size() ? drawn_width_ - line.size() : 0), "");
    drawn_width_ = std::max(drawn_width_, line.size());
  }
  std::fflush(stderr);
}

void ProgressMeter::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!drawn_) return;
  if (mode_ == Mode::Lines) {
    end_progress_lines();
  } else {
    std::fprintf(stderr, "\r%*s\r", int(drawn_width_), "");
    redraw_file_line();
  }
  std::fflush(stderr);
  drawn_ = false;
  drawn_width_ = 0;
}

}  // namespace gpbzip2::cli
