// Errors the library reports; the program maps each kind to bzip2's exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace gpbzip2 {

enum class ErrorKind {
  Io,         // reading or writing failed (exit 1)
  Corrupt,    // the compressed data is damaged (exit 2)
  Truncated,  // the compressed data ends early (exit 2)
  NotBzip2,   // the input is not a .bz2 stream (exit 2)
  Internal,   // a bug or resource failure (exit 3)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace gpbzip2
