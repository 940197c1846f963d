#include "file_ops.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace gpbzip2::cli {

namespace {
struct SuffixPair {
  const char* compressed;
  const char* original;
};
constexpr SuffixPair kSuffixes[] = {{".bz2", ""}, {".bz", ""}, {".tbz2", ".tar"}, {".tbz", ".tar"}};

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
}  // namespace

const char* compressed_suffix(const std::string& name) {
  for (const auto& p : kSuffixes)
    if (ends_with(name, p.compressed)) return p.compressed;
  return nullptr;
}

OutputName decompressed_name(const std::string& name) {
  for (const auto& p : kSuffixes)
    if (ends_with(name, p.compressed))
      return {name.substr(0, name.size() - std::strlen(p.compressed)) + p.original, true};
  return {name + ".out", false};
}

bool file_readable(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_not_regular(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode);
}

int other_links(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return int(st.st_nlink) - 1;
}

std::optional<struct stat> save_metadata(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

void apply_metadata(int fd, const struct stat& st) {
  // Failures are not errors: bzip2 too carries these over only as far as it is allowed.
  // The owner goes first, as changing it clears set-user-ID and set-group-ID bits.
  (void)::fchown(fd, st.st_uid, st.st_gid);
  (void)::fchmod(fd, st.st_mode & 07777);
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  (void)::futimens(fd, times);
}

int create_output(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, S_IRUSR | S_IWUSR);
}

// --- Cleanup on an early stop. The state lives in fixed buffers so that a signal handler
// can read it; `g_guarded` says whether the paths are complete.
namespace {
char g_program[256];
char g_input[4096];
char g_output[4096];
volatile sig_atomic_t g_guarded = 0;
volatile sig_atomic_t g_output_fd = -1;
volatile sig_atomic_t g_noisy = 1;
volatile sig_atomic_t g_files_total = 0;
volatile sig_atomic_t g_files_started = 0;

void copy_bounded(char* dst, size_t cap, const std::string& src) {
  const size_t n = std::min(cap - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

void put(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= size_t(w);
  }
}

void put_int(long v) {
  char buf[24];
  char* p = buf + sizeof buf;
  *--p = '\0';
  do {
    *--p = char('0' + v % 10);
    v /= 10;
  } while (v > 0);
  put(p);
}

void put_prog(const char* rest) {
  put(g_program);
  put(": ");
  put(rest);
}

void on_signal(int) {
  put("\n");
  put_prog("Control-C or similar caught, quitting.\n");
  clean_up_and_fail(1);
}
}  // namespace

void set_cleanup_context(const std::string& program, bool noisy, int files_total) {
  copy_bounded(g_program, sizeof g_program, program);
  g_noisy = noisy;
  g_files_total = files_total;
}

void note_file_started() { g_files_started = g_files_started + 1; }

void guard_output(const std::string& input, const std::string& output, int fd) {
  g_guarded = 0;
  copy_bounded(g_input, sizeof g_input, input);
  copy_bounded(g_output, sizeof g_output, output);
  g_output_fd = fd;
  g_guarded = 1;
}

void release_output() {
  g_guarded = 0;
  g_output_fd = -1;
}

void clean_up_and_fail(int exit_code) {
  if (g_guarded) {
    g_guarded = 0;
    struct stat st;
    if (::stat(g_input, &st) == 0) {
      if (g_noisy) {
        put_prog("Deleting output file ");
        put(g_output);
        put(", if it exists.\n");
      }
      if (g_output_fd >= 0) ::close(g_output_fd);
      if (::unlink(g_output) != 0) put_prog("WARNING: deletion of output file (apparently) failed.\n");
    } else {
      // The input is gone (removed by someone else): the output may be the only copy.
      put_prog("WARNING: deletion of output file suppressed\n");
      put_prog("   since input file no longer exists.  Output file\n");
      put_prog("   `");
      put(g_output);
      put("' may be incomplete.\n");
      put_prog("   I suggest doing an integrity test (");
      put(g_program);
      put(" -tv) of it.\n");
    }
  }
  if (g_noisy && g_files_total > 0 && g_files_started < g_files_total) {
    put_prog("WARNING: some files have not been processed:\n");
    put_prog("   ");
    put_int(g_files_total);
    put(" specified on command line, ");
    put_int(g_files_total - g_files_started);
    put(" not processed yet.\n\n");
  }
  ::_exit(exit_code);
}

void install_signal_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace gpbzip2::cli
