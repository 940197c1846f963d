#include "progress.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

#include "messages.h"

namespace gpbzip2::cli {

ProgressMeter::ProgressMeter(bool forced, bool noisy, std::string label, uint64_t total)
    : enabled_(forced || (noisy && isatty(STDERR_FILENO))),
      forced_(forced),
      label_(std::move(label)),
      total_(total) {}

void ProgressMeter::update(uint64_t bytes_in, uint64_t /*bytes_out*/) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!forced_ && elapsed < 1.0) return;
  if (drawn_width_ > 0 && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;

  const double mb = double(bytes_in) / 1e6;
  const double rate = elapsed > 0 ? mb / elapsed : 0.0;
  char line[512];
  int n;
  if (total_ > 0) {
    const double frac = std::min(1.0, double(bytes_in) / double(total_));
    const double left = rate > 0 ? (double(total_) / 1e6 - mb) / rate : 0.0;
    const long secs = long(left < 0 ? 0 : left);
    n = std::snprintf(line, sizeof line, "  %s: %5.1f%%, %.1f MB/s, %ld:%02ld left", label_.c_str(),
                      100.0 * frac, rate, secs / 60, secs % 60);
  } else {
    n = std::snprintf(line, sizeof line, "  %s: %.1f MB, %.1f MB/s", label_.c_str(), mb, rate);
  }
  if (n < 0) return;
  const size_t width = std::min(size_t(n), sizeof line - 1);
  // Pads over a longer previous line; \r keeps the meter on one terminal line.
  std::fprintf(stderr, "\r%s%*s", line, int(drawn_width_ > width ? drawn_width_ - width : 0), "");
  std::fflush(stderr);
  drawn_width_ = std::max(drawn_width_, width);
}

void ProgressMeter::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_width_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", int(drawn_width_), "");
  redraw_file_line();
  std::fflush(stderr);
  drawn_width_ = 0;
}

}  // namespace gpbzip2::cli
