// Files as bzip2 treats them: output names, the checks before touching a file, metadata
// carried to the output, and removing a half-written output when the run is cut short.
#pragma once
#include <optional>
#include <string>
#include <sys/stat.h>

namespace gpbzip2::cli {

// The compressed suffix `name` ends with (".bz2", ".bz", ".tbz2", ".tbz"), or nullptr.
const char* compressed_suffix(const std::string& name);

struct OutputName {
  std::string name;
  bool guessed;  // false: no known suffix, so bzip2's ".out" was added
};
// a.bz2 -> a, a.bz -> a, a.tbz2 / a.tbz -> a.tar, anything else -> a.out.
OutputName decompressed_name(const std::string& name);

// bzip2 calls a file present when it can be opened for reading; errno is left set when not.
// (FIFOs are opened without blocking.)
bool file_readable(const std::string& path);
bool is_directory(const std::string& path);
// Not a regular file itself (a symlink counts as not regular, as in bzip2).
bool is_not_regular(const std::string& path);
// Hard links besides this one.
int other_links(const std::string& path);

// Permission bits, owner and times of the input, saved before it is read (reading moves atime).
std::optional<struct stat> save_metadata(const std::string& path);
// Applied to the finished output: owner (only works as root; failure ignored, as in bzip2),
// mode, then atime/mtime with nanoseconds.
void apply_metadata(int fd, const struct stat& st);

// Creates the output, refusing to follow or replace anything there, private until done.
int create_output(const std::string& path);

// Cleanup when the run stops early (signal, I/O error, corrupt data), as bzip2 does: the
// output being written is removed unless its input is gone, and the files not reached are
// counted. Everything here is async-signal-safe.
void set_cleanup_context(const std::string& program, bool noisy, int files_total);
void note_file_started();  // one more file counted as processed
// Between these two calls, an early stop removes `output` (closing `fd` first).
void guard_output(const std::string& input, const std::string& output, int fd);
void release_output();
[[noreturn]] void clean_up_and_fail(int exit_code);
// SIGINT, SIGTERM, SIGHUP: "Control-C or similar caught", then clean_up_and_fail(1).
void install_signal_handlers();

}  // namespace gpbzip2::cli
