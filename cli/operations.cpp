#include "operations.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "fd_streams.h"
#include "file_ops.h"
#include "gpbzip2.h"
#include "messages.h"
#include "progress.h"

namespace gpbzip2::cli {
namespace {

const Options* g_opts;
int g_exit = 0;  // the worst outcome so far: bzip2 keeps the highest code
bool g_unzip_failed = false;  // some input was not a .bz2 file
bool g_test_failed = false;   // some input failed its test

void set_exit(int code) { g_exit = std::max(g_exit, code); }

// One input and its output, named as bzip2 names them in messages.
struct Job {
  Job() = default;
  Job(std::string in, std::string out) : in_name(std::move(in)), out_name(std::move(out)) {}
  std::string in_name, out_name;
  int in_fd = -1, out_fd = -1;
  std::optional<struct stat> meta;  // F2F only: carried over to the output
};

void show_file_names(const Job& job) {
  if (noisy())
    say_raw("\tInput file = %s, output file = %s\n", job.in_name.c_str(), job.out_name.c_str());
}

// `reason`: what went wrong where no system call did (a GPU that would not open).
[[noreturn]] void io_error(const Job& job, int err, const char* reason = nullptr) {
  // A reader that went away is not worth a message: stop as if SIGPIPE had done it.
  if (err == EPIPE) ::_exit(1);
  break_line();
  say("I/O or other error, bailing out.  Possible reason follows.");
  say("%s", err || !reason ? std::strerror(err ? err : EIO) : reason);
  show_file_names(job);
  clean_up_and_fail(1);
}

[[noreturn]] void panic(const Job& job, const char* what) {
  break_line();
  say("PANIC -- internal consistency error:");
  say_raw("\t%s\n\tThis is a BUG.  Please report it to the gpbzip2 developers.\n", what);
  show_file_names(job);
  clean_up_and_fail(3);
}

[[noreturn]] void out_of_memory(const Job& job) {
  break_line();
  say("couldn't allocate enough memory");
  show_file_names(job);
  clean_up_and_fail(1);
}

// bzip2 will not put compressed data on a screen nor take it from a keyboard.
void refuse_terminal(const char* action) {
  say("I won't %s a terminal.", action);
  say("For help, type: `%s --help'.", program_name().c_str());
  set_exit(1);
}

uint64_t input_size(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0;
}

// Library notices (GPU fallbacks and the like), shown with -v once the file's line is done.
class Notices {
 public:
  std::function<void(const std::string&)> callback() {
    return [this](const std::string& s) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(s);
    };
  }
  void show(const std::string& in_name) {
    if (verbosity() < 1) return;
    for (const auto& s : lines_) say("%s: %s", in_name.c_str(), s.c_str());
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// The checks bzip2 makes, in bzip2's order, before an input is opened. False: skip the file.
bool input_usable(const Job& job, const char* missing_fmt) {
  if (!file_readable(job.in_name)) {
    say(missing_fmt, job.in_name.c_str(), std::strerror(errno));
    set_exit(1);
    return false;
  }
  return true;
}

bool not_directory(const Job& job) {
  if (is_directory(job.in_name)) {
    say("Input file %s is a directory.", job.in_name.c_str());
    set_exit(1);
    return false;
  }
  return true;
}

bool regular_or_forced(const Job& job) {
  if (!g_opts->force && is_not_regular(job.in_name)) {
    if (noisy()) say("Input file %s is not a normal file.", job.in_name.c_str());
    set_exit(1);
    return false;
  }
  return true;
}

bool output_free(const Job& job) {
  if (!file_readable(job.out_name)) return true;
  if (g_opts->force) {
    std::remove(job.out_name.c_str());
    return true;
  }
  say("Output file %s already exists.", job.out_name.c_str());
  set_exit(1);
  return false;
}

bool single_link_or_forced(const Job& job) {
  const int n = g_opts->force ? 0 : other_links(job.in_name);
  if (n > 0) {
    say("Input file %s has %d other link%s.", job.in_name.c_str(), n, n > 1 ? "s" : "");
    set_exit(1);
    return false;
  }
  return true;
}

// Opens input and output for file-to-file work; false (and a message) when either fails.
bool open_file_pair(Job& job) {
  job.in_fd = ::open(job.in_name.c_str(), O_RDONLY | O_CLOEXEC);
  const int in_errno = errno;
  job.out_fd = create_output(job.out_name);
  if (job.out_fd < 0) {
    say("Can't create output file %s: %s.", job.out_name.c_str(), std::strerror(errno));
    if (job.in_fd >= 0) ::close(job.in_fd);
    set_exit(1);
    return false;
  }
  if (job.in_fd < 0) {
    say("Can't open input file %s: %s.", job.in_name.c_str(), std::strerror(in_errno));
    ::close(job.out_fd);
    ::unlink(job.out_name.c_str());
    set_exit(1);
    return false;
  }
  // From here until it is complete, an early stop removes the output.
  guard_output(job.in_name, job.out_name, job.out_fd);
  return true;
}

// The output is complete: give it the input's metadata, make it durable when it is about
// to become the only copy, close it, and only then remove the input (unless -k).
void finish_file_pair(Job& job) {
  if (job.meta) apply_metadata(job.out_fd, *job.meta);
  if (!g_opts->keep && ::fsync(job.out_fd) != 0 && errno != EINVAL) io_error(job, errno);
  if (::close(job.out_fd) != 0) io_error(job, errno);
  job.out_fd = -1;
  release_output();
  ::close(job.in_fd);
  if (!g_opts->keep && ::unlink(job.in_name.c_str()) != 0) io_error(job, errno);
}

// Library errors that stop the whole run, as they stop bzip2. Returns for the kinds the
// caller handles per file.
void fail_on(const Job& job, const Error& e, const InputFd& in, const OutputFd* out) {
  switch (e.kind()) {
    case ErrorKind::Io:
      io_error(job, out && out->error() ? out->error() : in.error(), e.what());
    case ErrorKind::Internal:
      panic(job, e.what());
    default:
      return;
  }
}

}  // namespace

void compress_one(const std::string* name) {
  const Options& o = *g_opts;
  Job job;
  switch (o.src) {
    case SrcMode::StdinToStdout: job = Job("(stdin)", "(stdout)"); break;
    case SrcMode::FilesToFiles: job = Job(*name, *name + ".bz2"); break;
    case SrcMode::FilesToStdout: job = Job(*name, "(stdout)"); break;
  }
  const bool files = o.src != SrcMode::StdinToStdout;
  const bool to_files = o.src == SrcMode::FilesToFiles;
  if (files && !input_usable(job, "Can't open input file %s: %s.")) return;
  if (const char* suffix = compressed_suffix(job.in_name)) {
    if (noisy()) say("Input file %s already has %s suffix.", job.in_name.c_str(), suffix);
    set_exit(1);
    return;
  }
  if (files && !not_directory(job)) return;
  if (to_files && (!regular_or_forced(job) || !output_free(job) || !single_link_or_forced(job))) return;
  if (to_files) job.meta = save_metadata(job.in_name);  // before reading moves atime

  if (to_files) {
    if (!open_file_pair(job)) return;
  } else {
    if (isatty(STDOUT_FILENO)) return refuse_terminal("write compressed data to");
    job.out_fd = STDOUT_FILENO;
    job.in_fd = files ? ::open(job.in_name.c_str(), O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (job.in_fd < 0) {
      say("Can't open input file %s: %s.", job.in_name.c_str(), std::strerror(errno));
      set_exit(1);
      return;
    }
  }

  if (verbosity() >= 1) open_file_line(job.in_name, o.longest_name);
  // From a pipe (tar -I gpbzip2), 64 kB reads held the reader to 743-796 MB/s on an H100
  // host where it cuts 1.1-1.2 GB/s from a file; 1 MiB ones 994-1106 (kernels/NOTES.md).
  widen_pipe(job.in_fd);
  InputFd in(job.in_fd);
  OutputFd out(job.out_fd);
  ProgressMeter meter(o.progress, noisy(), job.in_name, input_size(job.in_fd));
  Notices notices;
  CompressOptions copts;
  copts.level = o.level;
  copts.threads = o.threads;
  copts.gpu = o.gpu;
  copts.input_size = input_size(job.in_fd);
  copts.perturb = o.perturb;
  copts.progress = [&](uint64_t i, uint64_t w) { meter.update(i, w); };
  copts.notice = notices.callback();
  CompressTotals totals;
  try {
    totals = compress_stream(in, out, copts);
  } catch (const Error& e) {
    fail_on(job, e, in, &out);
    panic(job, e.what());  // compression has no data errors
  } catch (const std::bad_alloc&) {
    out_of_memory(job);
  } catch (const std::system_error&) {  // a thread the system could not give
    out_of_memory(job);
  }
  if (!files) in.leave_past(totals.bytes_in);  // scouts may have read it at offsets
  meter.finish();
  if (verbosity() >= 1) close_file_line(ratio_summary(totals.bytes_in, totals.bytes_out).c_str());
  if (verbosity() >= 1 && o.perturb)
    say("%s: %llu of %llu blocks perturbed (written as randomised blocks)", job.in_name.c_str(),
        static_cast<unsigned long long>(totals.perturbed_blocks),
        static_cast<unsigned long long>(totals.blocks));
  notices.show(job.in_name);
  if (to_files)
    finish_file_pair(job);
  else if (files)
    ::close(job.in_fd);
}

namespace {

// bzip2 -df passes through input that does not start like a .bz2 stream (as zcat -f does).
bool starts_like_bzip2(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const bool ok = i < 3 ? p[i] == "BZh"[i] : (p[i] >= '1' && p[i] <= '9');
    if (!ok) return false;
  }
  return true;
}

void copy_through(InputFd& in, OutputFd& out) {
  std::vector<uint8_t> buf(1 << 16);
  while (size_t n = in.read(buf.data(), buf.size())) out.write(buf.data(), n);
}

}  // namespace

void decompress_one(const std::string* name) {
  const Options& o = *g_opts;
  Job job;
  bool cant_guess = false;
  switch (o.src) {
    case SrcMode::StdinToStdout: job = Job("(stdin)", "(stdout)"); break;
    case SrcMode::FilesToFiles: {
      OutputName n = decompressed_name(*name);
      job = Job(*name, n.name);
      cant_guess = !n.guessed;
      break;
    }
    case SrcMode::FilesToStdout: job = Job(*name, "(stdout)"); break;
  }
  const bool files = o.src != SrcMode::StdinToStdout;
  const bool to_files = o.src == SrcMode::FilesToFiles;
  if (files && (!input_usable(job, "Can't open input file %s: %s.") || !not_directory(job))) return;
  if (to_files && !regular_or_forced(job)) return;
  if (cant_guess && noisy())
    say("Can't guess original name for %s -- using %s", job.in_name.c_str(), job.out_name.c_str());
  if (to_files && (!output_free(job) || !single_link_or_forced(job))) return;
  if (to_files) job.meta = save_metadata(job.in_name);

  if (to_files) {
    if (!open_file_pair(job)) return;
  } else if (files) {
    job.out_fd = STDOUT_FILENO;
    job.in_fd = ::open(job.in_name.c_str(), O_RDONLY | O_CLOEXEC);
    if (job.in_fd < 0) {
      say("Can't open input file %s:%s.", job.in_name.c_str(), std::strerror(errno));
      set_exit(1);
      return;
    }
  } else {
    if (isatty(STDIN_FILENO)) return refuse_terminal("read compressed data from");
    job.in_fd = STDIN_FILENO;
    job.out_fd = STDOUT_FILENO;
  }

  if (verbosity() >= 1) open_file_line(job.in_name, o.longest_name);
  InputFd in(job.in_fd);
  OutputFd out(job.out_fd);
  ProgressMeter meter(o.progress, noisy(), job.in_name, input_size(job.in_fd));
  Notices notices;
  DecompressOptions dopts;
  dopts.threads = o.threads;
  dopts.gpu = o.gpu;
  dopts.input_size = input_size(job.in_fd);
  dopts.progress = [&](uint64_t i, uint64_t w) { meter.update(i, w); };
  dopts.notice = notices.callback();
  bool is_bzip2 = true;
  bool garbage = false;
  try {
    uint8_t head[4];
    size_t got = 0;
    if (o.force) {
      while (got < 4)
        if (size_t n = in.read(head + got, 4 - got)) got += n; else break;
    }
    in.unread(head, got);
    if (!starts_like_bzip2(head, got))
      copy_through(in, out);
    else
      garbage = decompress_stream(in, &out, dopts).trailing_garbage;
  } catch (const Error& e) {
    fail_on(job, e, in, &out);
    if (e.kind() != ErrorKind::NotBzip2) {
      // Damaged data stops the run, as in bzip2; the partial output goes.
      meter.finish();
      say("%s: %s", job.in_name.c_str(), e.what());
      clean_up_and_fail(2);
    }
    is_bzip2 = false;
  } catch (const std::bad_alloc&) {
    out_of_memory(job);
  } catch (const std::system_error&) {  // a thread the system could not give
    out_of_memory(job);
  }
  meter.finish();
  if (garbage && noisy()) {
    break_line();
    say("%s: trailing garbage after EOF ignored", job.in_name.c_str());
  }
  if (is_bzip2) {
    if (to_files)
      finish_file_pair(job);
    else if (files)
      ::close(job.in_fd);
    if (verbosity() >= 1) close_file_line("done");
    notices.show(job.in_name);
    return;
  }
  g_unzip_failed = true;
  if (to_files) {
    release_output();
    ::close(job.out_fd);
    ::close(job.in_fd);
    if (::unlink(job.out_name.c_str()) != 0) io_error(job, errno);
  } else if (files) {
    ::close(job.in_fd);
  }
  set_exit(2);
  if (verbosity() >= 1)
    close_file_line("not a bzip2 file.");
  else
    say("%s is not a bzip2 file.", job.in_name.c_str());
}

void test_one(const std::string* name) {
  const Options& o = *g_opts;
  Job job(name ? *name : "(stdin)", "(none)");
  if (name && (!input_usable(job, "Can't open input %s: %s.") || !not_directory(job))) return;
  if (!name) {
    if (isatty(STDIN_FILENO)) return refuse_terminal("read compressed data from");
    job.in_fd = STDIN_FILENO;
  } else {
    job.in_fd = ::open(job.in_name.c_str(), O_RDONLY | O_CLOEXEC);
    if (job.in_fd < 0) {
      say("Can't open input file %s:%s.", job.in_name.c_str(), std::strerror(errno));
      set_exit(1);
      return;
    }
  }

  if (verbosity() >= 1) open_file_line(job.in_name, o.longest_name);
  InputFd in(job.in_fd);
  ProgressMeter meter(o.progress, noisy(), job.in_name, input_size(job.in_fd));
  DecompressOptions dopts;
  dopts.threads = o.threads;
  dopts.gpu = o.gpu;
  dopts.input_size = input_size(job.in_fd);
  dopts.progress = [&](uint64_t i, uint64_t w) { meter.update(i, w); };
  Notices notices;
  dopts.notice = notices.callback();
  const char* problem = nullptr;
  std::string detail;
  bool garbage = false;
  try {
    garbage = decompress_stream(in, nullptr, dopts).trailing_garbage;
  } catch (const Error& e) {
    fail_on(job, e, in, nullptr);
    // bzip2's words where they say the same; the library's where it says more (block, bit).
    if (e.kind() == ErrorKind::Truncated) problem = "file ends unexpectedly";
    if (e.kind() == ErrorKind::NotBzip2) problem = "bad magic number (file not created by bzip2)";
    detail = e.what();
    if (!problem) problem = detail.c_str();
  } catch (const std::bad_alloc&) {
    out_of_memory(job);
  } catch (const std::system_error&) {  // a thread the system could not give
    out_of_memory(job);
  }
  meter.finish();
  if (name) ::close(job.in_fd);
  if (problem) {
    if (verbosity() >= 1)
      close_file_line(problem);
    else
      say("%s: %s", job.in_name.c_str(), problem);
    g_test_failed = true;
    return;
  }
  if (garbage && noisy()) {
    if (verbosity() >= 1)
      close_file_line("trailing garbage after EOF ignored");
    else
      say("%s: trailing garbage after EOF ignored", job.in_name.c_str());
  }
  if (verbosity() >= 1) close_file_line("ok");
  notices.show(job.in_name);
}

void start_run(const Options& opts) {
  g_opts = &opts;
  set_display(opts.noisy, opts.verbosity);
}

int end_run() {
  if (g_opts->op == OpMode::Decompress && g_unzip_failed) set_exit(2);
  if (g_opts->op == OpMode::Test && g_test_failed) {
    if (noisy())
      say_raw("\nYou can use the `bzip2recover' program to attempt to recover\n"
              "data from undamaged sections of corrupted files.\n\n");
    set_exit(2);
  }
  return g_exit;
}

}  // namespace gpbzip2::cli
