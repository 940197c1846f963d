#include "io.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <unistd.h>

#include "error.h"

namespace gpbzip2 {

size_t FdSource::read(uint8_t* buf, size_t n) {
  for (;;) {
    ssize_t r = ::read(fd_, buf, n);
    if (r >= 0) return size_t(r);
    if (errno != EINTR) throw Error(ErrorKind::Io, std::string("read error: ") + std::strerror(errno));
  }
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
  size_t k = std::min(n, data_.size() - pos_);
  if (k > 0) std::memcpy(buf, data_.data() + pos_, k);  // an empty span may have no data()
  pos_ += k;
  return k;
}

}  // namespace gpbzip2
