// One input at a time, compressed, decompressed or tested as bzip2 would: the checks in
// bzip2's order, the messages, the files made and removed. Problems that make bzip2 stop
// the whole run (I/O errors, damaged data while decompressing) end the program here too.
#pragma once
#include <string>

#include "options.h"

namespace gpbzip2::cli {

// Remembers the options for the calls below.
void start_run(const Options& opts);
// `name` is nullptr for stdin to stdout.
void compress_one(const std::string* name);
void decompress_one(const std::string* name);
void test_one(const std::string* name);
// bzip2's closing words, and the exit code: the worst outcome of all files.
int end_run();

}  // namespace gpbzip2::cli
