#include "fd_streams.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

namespace gpbzip2::cli {

size_t InputFd::read(uint8_t* buf, size_t n) {
  if (!pending_.empty()) {
    const size_t k = std::min(n, pending_.size());
    std::memcpy(buf, pending_.data(), k);
    pending_.erase(pending_.begin(), pending_.begin() + ptrdiff_t(k));
    return k;
  }
  for (;;) {
    const ssize_t r = ::read(fd_, buf, n);
    if (r >= 0) return size_t(r);
    if (errno == EINTR) continue;
    errno_ = errno;
    throw Error(ErrorKind::Io, std::string("read error: ") + std::strerror(errno_));
  }
}

size_t InputFd::read_at(uint64_t offset, uint8_t* buf, size_t n) {
  const int64_t r = read_fd_at(fd_, uint64_t(start_) + offset, buf, n);
  if (r < 0) {
    errno_ = errno;
    throw Error(ErrorKind::Io, std::string("read error: ") + std::strerror(errno_));
  }
  return size_t(r);
}

void InputFd::leave_past(uint64_t consumed) const {
  if (start_ >= 0) ::lseek(fd_, off_t(uint64_t(start_) + consumed), SEEK_SET);
}

void OutputFd::write(const uint8_t* buf, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, buf, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      errno_ = errno;
      throw Error(ErrorKind::Io, std::string("write error: ") + std::strerror(errno_));
    }
    buf += w;
    n -= size_t(w);
  }
}

void widen_pipe(int fd) {
#ifdef F_SETPIPE_SZ
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
  (void)fd;
#endif
}

}  // namespace gpbzip2::cli
