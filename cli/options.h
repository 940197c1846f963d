// The command line as bzip2 reads it: $BZIP2 and $BZIP first, then argv; combined short
// flags; the program's name choosing the default operation.
#pragma once
#include <string>
#include <vector>

#include "gpbzip2.h"

namespace gpbzip2::cli {

enum class OpMode { Compress, Decompress, Test };
// Where data goes: stdin to stdout, each file to stdout (-c), each file to a new file.
enum class SrcMode { StdinToStdout, FilesToStdout, FilesToFiles };

struct Options {
  OpMode op = OpMode::Compress;
  SrcMode src = SrcMode::StdinToStdout;
  bool force = false;
  bool keep = false;
  bool small = false;
  bool noisy = true;
  int verbosity = 0;
  int level = 9;
  int threads = 0;  // 0: every core
  GpuMode gpu = GpuMode::Auto;
  bool progress = false;  // --progress: show the meter even where it would not be shown
  bool perturb = false;   // --perturb: deep blocks written randomised (compression only)
  std::vector<std::string> files;
  size_t longest_name = 7;  // strlen("(stdin)"), bzip2's starting width for -v lines
};

// Parses the environment and argv. Prints and exits for --help, --version, --license and
// bad flags, as bzip2 does (exit 0 for the first three, 1 for bad flags).
Options parse_command_line(int argc, char** argv);

}  // namespace gpbzip2::cli
