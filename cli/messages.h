// What the program says on stderr, in bzip2's words where bzip2 has words for it.
#pragma once
#include <cstdint>
#include <string>

namespace gpbzip2::cli {

// The name messages start with: the basename of argv[0], as bzip2 uses.
void set_program_name(const std::string& name);
const std::string& program_name();

// -q turns off the notes bzip2 calls noncritical; -v (repeatable) adds per-file lines.
void set_display(bool noisy, int verbosity);
bool noisy();
int verbosity();

// "prog: " + the formatted text, on its own line (ends an open -v line first).
void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// The formatted text as is, continuing an open -v line.
void say_raw(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// -v: "  name: " padded to the longest name on the command line; the result follows on
// the same line (say_raw), or say() breaks the line first.
void open_file_line(const std::string& name, size_t longest_name);
void close_file_line(const char* result);  // "ok", "done", ... then newline
// bzip2 starts some messages with a line break, whether or not a -v line is open.
void break_line();
// Re-draws an open -v line after the progress meter used the terminal line.
void redraw_file_line();
// Progress where stderr is no terminal, one line each: the first ends an open -v line,
// the next start as it does, and end_progress_lines() opens it again for the result.
void progress_line(const std::string& label, const char* text);
void end_progress_lines();

// bzip2's compression summary after "  name: ".
std::string ratio_summary(uint64_t bytes_in, uint64_t bytes_out);

// -V: version, build and GPUs. -L: version, copyright and license notice, as bzip2 -L.
std::string version_text();
std::string license_text();

}  // namespace gpbzip2::cli
