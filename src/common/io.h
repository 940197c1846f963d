// Byte sources and sinks the pipelines read from and write to.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpbzip2 {

class Source {
 public:
  virtual ~Source() = default;
  // Reads up to n bytes; returns 0 only at end of input. Throws Error on failure.
  virtual size_t read(uint8_t* buf, size_t n) = 0;
  // Whether read_at works: a regular file, which several threads may read at once, each
  // at its own offset (read() is one position, taken in turns: the block reader's scouts
  // waited for one another there).
  virtual bool positional() const { return false; }
  // Reads up to n bytes from `offset` bytes past where the source began, leaving read()'s
  // position alone; returns 0 only at or past the end. Only where positional().
  virtual size_t read_at(uint64_t offset, uint8_t* buf, size_t n);
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Writes all n bytes or throws Error.
  virtual void write(const uint8_t* buf, size_t n) = 0;
};

// Where a descriptor of a regular file stands, which is where a source over it begins; -1
// for anything else (a pipe, a terminal, a device) and for files of no size, which are
// read as pipes are (what /proc lists: their size says nothing of what a read gives).
int64_t regular_file_position(int fd);
// pread of up to n bytes at `offset`, again where a signal cut it short: bytes read, 0 at
// or past the end, -1 with errno set on failure.
int64_t read_fd_at(int fd, uint64_t offset, uint8_t* buf, size_t n);

class FdSource final : public Source {
 public:
  explicit FdSource(int fd) : fd_(fd), start_(regular_file_position(fd)) {}
  size_t read(uint8_t* buf, size_t n) override;
  bool positional() const override { return start_ >= 0; }
  size_t read_at(uint64_t offset, uint8_t* buf, size_t n) override;

 private:
  int fd_;
  int64_t start_;
};

class FdSink final : public Sink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  void write(const uint8_t* buf, size_t n) override;

 private:
  int fd_;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const uint8_t> data) : data_(data) {}
  size_t read(uint8_t* buf, size_t n) override;
  bool positional() const override { return true; }
  size_t read_at(uint64_t offset, uint8_t* buf, size_t n) override;

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

class VectorSink final : public Sink {
 public:
  void write(const uint8_t* buf, size_t n) override { data.insert(data.end(), buf, buf + n); }
  std::vector<uint8_t> data;
};

}  // namespace gpbzip2
