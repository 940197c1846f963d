// The program's ends of the library's Source and Sink: file descriptors that remember the
// errno of a failure, so that messages can name it as bzip2 does (perror style) and a
// closed pipe can be told from a full disk.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "common/io.h"

namespace gpbzip2::cli {

class InputFd final : public Source {
 public:
  explicit InputFd(int fd) : fd_(fd), start_(regular_file_position(fd)) {}
  // Bytes read ahead (to look at the magic) are given out again first: they came from
  // the file's start, so offsets past it still count from there.
  void unread(const uint8_t* buf, size_t n) { pending_.insert(pending_.begin(), buf, buf + n); }
  size_t read(uint8_t* buf, size_t n) override;
  bool positional() const override { return start_ >= 0; }
  size_t read_at(uint64_t offset, uint8_t* buf, size_t n) override;
  // Positions a file read at offsets `consumed` bytes past where the source began, where
  // reading it through would have left it: standard input shared with the next command
  // goes on after what was compressed, as after bzip2.
  void leave_past(uint64_t consumed) const;
  int error() const { return errno_; }

 private:
  int fd_;
  int64_t start_;
  std::atomic<int> errno_ = 0;  // read_at runs in several threads
  std::vector<uint8_t> pending_;
};

class OutputFd final : public Sink {
 public:
  explicit OutputFd(int fd) : fd_(fd) {}
  void write(const uint8_t* buf, size_t n) override;
  int error() const { return errno_; }

 private:
  int fd_;
  int errno_ = 0;
};

// Grows the buffer of a pipe to 1 MiB where the system allows (else leaves it as it is):
// the reader then takes the input in few large reads rather than many of 64 kB.
void widen_pipe(int fd);

}  // namespace gpbzip2::cli
