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
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Writes all n bytes or throws Error.
  virtual void write(const uint8_t* buf, size_t n) = 0;
};

class FdSource final : public Source {
 public:
  explicit FdSource(int fd) : fd_(fd) {}
  size_t read(uint8_t* buf, size_t n) override;

 private:
  int fd_;
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
