#include "messages.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "common/gpu.h"

namespace gpbzip2::cli {
namespace {

std::string g_program = "gpbzip2";
bool g_noisy = true;
int g_verbosity = 0;
// The -v line of the file being worked on, kept so that it can be ended or redrawn.
std::string g_file_line;
bool g_line_open = false;
bool g_line_in_progress = false;  // ended by progress lines, to be opened again

void vprint(const char* fmt, va_list ap) { std::vfprintf(stderr, fmt, ap); }

}  // namespace

void set_program_name(const std::string& name) { g_program = name; }
const std::string& program_name() { return g_program; }

void set_display(bool noisy, int verbosity) {
  g_noisy = noisy;
  g_verbosity = verbosity;
}
bool noisy() { return g_noisy; }
int verbosity() { return g_verbosity; }

void say(const char* fmt, ...) {
  if (g_line_open) {
    std::fputc('\n', stderr);
    g_line_open = false;
  }
  std::fprintf(stderr, "%s: ", g_program.c_str());
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

void say_raw(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
}

void open_file_line(const std::string& name, size_t longest_name) {
  g_file_line = "  " + name + ": ";
  if (name.size() < longest_name) g_file_line.append(longest_name - name.size(), ' ');
  std::fputs(g_file_line.c_str(), stderr);
  g_line_open = true;
  g_line_in_progress = false;
}

void close_file_line(const char* result) {
  std::fprintf(stderr, "%s\n", result);
  g_line_open = false;
}

void break_line() {
  std::fputc('\n', stderr);
  g_line_open = false;
}

void redraw_file_line() {
  if (g_line_open) std::fputs(g_file_line.c_str(), stderr);
}

void progress_line(const std::string& label, const char* text) {
  if (g_line_open) {
    g_line_open = false;
    g_line_in_progress = true;
  } else if (g_line_in_progress) {
    std::fputs(g_file_line.c_str(), stderr);
  } else {
    std::fprintf(stderr, "  %s: ", label.c_str());
  }
  std::fprintf(stderr, "%s\n", text);
}

void end_progress_lines() {
  if (!g_line_in_progress) return;
  std::fputs(g_file_line.c_str(), stderr);
  g_line_open = true;
  g_line_in_progress = false;
}

std::string ratio_summary(uint64_t bytes_in, uint64_t bytes_out) {
  if (bytes_in == 0) return " no data compressed.";
  const double in = double(bytes_in), out = double(bytes_out);
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%6.3f:1, %6.3f bits/byte, %5.2f%% saved, %" PRIu64 " in, %" PRIu64 " out.",
                in / out, 8.0 * out / in, 100.0 * (1.0 - out / in), bytes_in, bytes_out);
  return buf;
}

namespace {
const char* const kVersionLine =
    "gpbzip2, a parallel bzip2-compatible file compressor.  Version " GPBZIP2_VERSION ".\n";
}  // namespace

std::string version_text() {
  std::string s = kVersionLine;
  s += "   Writes and reads the .bz2 format of bzip2 1.0.x; compressed output is\n";
  s += "   byte-identical to bzip2's at the same block size.\n";
  s += built_with_cuda() ? "   Build: CUDA (GPU station included).\n" : "   Build: CPU-only (no CUDA).\n";
  auto gpus = list_gpus();
  if (gpus.empty()) s += "   GPUs: none usable.\n";
  for (const auto& g : gpus) {
    char line[256];
    std::snprintf(line, sizeof line, "   GPU %d: %s, %.1f GiB\n", g.index, g.name.c_str(),
                  double(g.memory_bytes) / double(1ull << 30));
    s += line;
  }
  return s;
}

// The shape of bzip2's -L, in the words of the MIT license (the LICENSE file).
std::string license_text() {
  return std::string(kVersionLine) +
         "\n"
         "   Copyright (c) 2026 the gpbzip2 authors.\n"
         "\n"
         "   This program is free software; you can redistribute it and/or modify\n"
         "   it under the terms of the MIT license, set out in the LICENSE file\n"
         "   included in the gpbzip2 source distribution.\n"
         "\n"
         "   This program is distributed in the hope that it will be useful,\n"
         "   but WITHOUT ANY WARRANTY; without even the implied warranty of\n"
         "   MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the\n"
         "   LICENSE file for more details.\n"
         "\n";
}

}  // namespace gpbzip2::cli
