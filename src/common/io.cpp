#include "io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "error.h"

namespace gpbzip2 {

size_t Source::read_at(uint64_t, uint8_t*, size_t) {
  throw Error(ErrorKind::Internal, "positional read of a source that has none");
}

int64_t regular_file_position(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return -1;
  return int64_t(::lseek(fd, 0, SEEK_CUR));
}

int64_t read_fd_at(int fd, uint64_t offset, uint8_t* buf, size_t n) {
  for (;;) {
    const ssize_t r = ::pread(fd, buf, n, off_t(offset));
    if (r >= 0 || errno != EINTR) return int64_t(r);
  }
}

size_t FdSource::read(uint8_t* buf, size_t n) {
  for (;;) {
    ssize_t r = ::read(fd_, buf, n);
    if (r >= 0) return size_t(r);
    if (errno != EINTR) throw Error(ErrorKind::Io, std::string("read error: ") + std::strerror(errno));
  }
}

size_t FdSource::read_at(uint64_t offset, uint8_t* buf, size_t n) {
  const int64_t r = read_fd_at(fd_, uint64_t(start_) + offset, buf, n);
  if (r < 0) throw Error(ErrorKind::Io, std::string("read error: ") + std::strerror(errno));
  return size_t(r);
}

void FdSink::write(const uint8_t* buf, size_t n) {
  while (n > 0) {
    ssize_t r = ::write(fd_, buf, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::Io, std::string("write error: ") + std::strerror(errno));
    }
    buf += r;
    n -= size_t(r);
  }
}

size_t MemorySource::read(uint8_t* buf, size_t n) {
  const size_t k = read_at(pos_, buf, n);
  pos_ += k;
  return k;
}

size_t MemorySource::read_at(uint64_t offset, uint8_t* buf, size_t n) {
  if (offset >= data_.size()) return 0;
  const size_t k = std::min(n, data_.size() - size_t(offset));
  if (k > 0) std::memcpy(buf, data_.data() + offset, k);  // an empty span may have no data()
  return k;
}

}  // namespace gpbzip2
