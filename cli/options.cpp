#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "messages.h"

namespace gpbzip2::cli {
namespace {

// The option model. CLI11 holds the names, values, checks and help; bzip2's spellings
// (combined short flags, $BZIP2) are turned into CLI11's by split_arguments() below.
struct Model {
  CLI::App app;
  CLI::Option *compress, *decompress, *test, *to_stdout, *keep, *force, *quiet, *verbose,
      *small, *license, *version, *help, *fast, *best, *exponential, *rep_best, *rep_fast,
      *progress, *perturb, *gpu_option;
  CLI::Option* level[10] = {};
  int threads = 0;
  std::string gpu;
  std::vector<std::string> files;

  explicit Model(const std::string& prog);
};

Model::Model(const std::string& prog) : app("", prog) {
  app.set_help_flag();  // -h is handled in flag order below, as bzip2 does
  help = app.add_flag("-h,--help");
  decompress = app.add_flag("-d,--decompress");
  compress = app.add_flag("-z,--compress");
  keep = app.add_flag("-k,--keep");
  force = app.add_flag("-f,--force");
  test = app.add_flag("-t,--test");
  to_stdout = app.add_flag("-c,--stdout");
  quiet = app.add_flag("-q,--quiet");
  verbose = app.add_flag("-v,--verbose");
  license = app.add_flag("-L,--license");
  version = app.add_flag("-V,--version");
  small = app.add_flag("-s,--small");
  for (int i = 1; i <= 9; i++) level[i] = app.add_flag("-" + std::to_string(i));
  fast = app.add_flag("--fast");
  best = app.add_flag("--best");
  app.add_option("-n,--threads", threads)
      ->check(CLI::Range(1, 4096))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  gpu_option = app.add_option("--gpu", gpu)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  progress = app.add_flag("--progress");
  perturb = app.add_flag("--perturb");
  exponential = app.add_flag("--exponential");
  rep_best = app.add_flag("--repetitive-best");
  rep_fast = app.add_flag("--repetitive-fast");
  app.add_option("FILE", files);
}

// bzip2's --help with this program's names, then the options bzip2 does not have.
std::string usage_text(const std::string& prog) {
  return "gpbzip2, a parallel bzip2-compatible file compressor.  Version " GPBZIP2_VERSION ".\n"
         "\n"
         "   usage: " + prog + " [flags and input files in any order]\n"
         "\n"
         "   -h --help           print this message\n"
         "   -d --decompress     force decompression\n"
         "   -z --compress       force compression\n"
         "   -k --keep           keep (don't delete) input files\n"
         "   -f --force          overwrite existing output files\n"
         "   -t --test           test compressed file integrity\n"
         "   -c --stdout         output to standard out\n"
         "   -q --quiet          suppress noncritical error messages\n"
         "   -v --verbose        be verbose (a 2nd -v gives more)\n"
         "   -L --license        display software version & license\n"
         "   -V --version        display software version, build & GPUs\n"
         "   -s --small          compress with 200k blocks at most\n"
         "   -1 .. -9            set block size to 100k .. 900k\n"
         "   --fast              alias for -1\n"
         "   --best              alias for -9\n"
         "\n"
         "   -n --threads=N      use N compute threads (default: one per usable core)\n"
         "   --gpu=MODE          auto: a GPU for large inputs only (the default),\n"
         "                       on: a GPU or exit 1, off: no GPU\n"
         "   --progress          show progress even if stderr is not a terminal\n"
         "                       (there as one line a second)\n"
         "   --perturb           write blocks with long repeats as bzip2's randomised\n"
         "                       blocks, which a GPU sorts faster: the output is a\n"
         "                       little larger and not bzip2's bytes; bzip2, lbzip2,\n"
         "                       7-Zip and Python read it, Go's compress/bzip2 and\n"
         "                       rapidgzip do not (ignored when decompressing)\n"
         "\n"
         "   If invoked as `gpbzip2', default action is to compress.\n"
         "              as `gpbunzip2', default action is to decompress.\n"
         "              as `gpbzcat', default action is to decompress to stdout.\n"
         "\n"
         "   If no file names are given, gpbzip2 compresses or decompresses\n"
         "   from standard input to standard output.  You can combine\n"
         "   short flags, so `-v -4' means the same as -v4 or -4v, &c.\n"
         "   $BZIP2 and $BZIP hold default flags, $GPBZIP2_GPU the --gpu mode.\n"
         "\n";
}

// bzip2 splits $BZIP2 and $BZIP at white space; every word counts as if typed first.
void add_env_words(std::vector<std::string>& words, const char* var) {
  const char* p = std::getenv(var);
  if (!p) return;
  std::string word;
  for (; ; p++) {
    if (*p == '\0' || std::isspace(static_cast<unsigned char>(*p))) {
      if (!word.empty()) words.push_back(word);
      word.clear();
      if (*p == '\0') break;
    } else {
      word += *p;
    }
  }
}

// The command line cut the way bzip2 reads it. bzip2 applies every short flag before any
// long one (so `--fast -9' means -1), and stops at the first bad flag of each kind.
struct Split {
  std::vector<std::string> short_flags;  // one CLI11 token per letter, values apart
  std::vector<std::string> long_flags;
  std::vector<std::string> files;
  std::string bad_short, bad_long;  // the word bzip2 would quote in "Bad flag"
};

[[noreturn]] void missing_value(const std::string& flag) {
  say("%s needs a value", flag.c_str());
  say("For help, type: `%s --help'.", program_name().c_str());
  std::exit(1);
}

bool takes_value(const CLI::Option* o) { return o->get_items_expected_min() > 0; }

Split split_arguments(const Model& m, const std::vector<std::string>& words) {
  Split s;
  bool flags_done = false;
  for (size_t i = 0; i < words.size(); i++) {
    const std::string& w = words[i];
    if (flags_done || w.empty() || w[0] != '-') {
      s.files.push_back(w);
    } else if (w == "--") {
      flags_done = true;
    } else if (w[1] == '-') {
      if (!s.bad_long.empty()) continue;
      const size_t eq = w.find('=');
      const CLI::Option* o = m.app.get_option_no_throw(w.substr(0, eq));
      if (!o || (eq != std::string::npos && !takes_value(o))) {
        s.bad_long = w;
        continue;
      }
      s.long_flags.push_back(w);
      if (eq == std::string::npos && takes_value(o)) {
        if (i + 1 == words.size()) missing_value(w);
        s.long_flags.push_back(words[++i]);
      }
    } else {
      if (!s.bad_short.empty()) continue;
      for (size_t j = 1; j < w.size(); j++) {
        const CLI::Option* o = m.app.get_option_no_throw(std::string("-") + w[j]);
        if (!o) {
          s.bad_short = w;
          break;
        }
        s.short_flags.push_back(std::string("-") + w[j]);
        if (takes_value(o)) {  // -n4, -n 4, -kn4
          if (j + 1 < w.size())
            s.short_flags.push_back(w.substr(j + 1));
          else if (i + 1 < words.size())
            s.short_flags.push_back(words[++i]);
          else
            missing_value(std::string("-") + w[j]);
          break;
        }
      }
    }
  }
  return s;
}

[[noreturn]] void usage_exit(Model& m, int code) {
  std::fputs(usage_text(m.app.get_name()).c_str(), stderr);
  std::exit(code);
}

[[noreturn]] void bad_flag(Model& m, const std::string& word) {
  say("Bad flag `%s'", word.c_str());
  usage_exit(m, 1);
}

// One flag's effect on the options; flags that print and leave do so here, in order.
void apply(Model& m, const CLI::Option* o, Options& opts) {
  if (o == m.help) usage_exit(m, 0);
  if (o == m.license || o == m.version) {
    std::fputs((o == m.license ? license_text() : version_text()).c_str(), stderr);
    std::exit(0);
  }
  if (o == m.compress) opts.op = OpMode::Compress;
  if (o == m.decompress) opts.op = OpMode::Decompress;
  if (o == m.test) opts.op = OpMode::Test;
  if (o == m.to_stdout) opts.src = SrcMode::FilesToStdout;
  if (o == m.keep) opts.keep = true;
  if (o == m.force) opts.force = true;
  if (o == m.quiet) opts.noisy = false;
  if (o == m.verbose) opts.verbosity++;
  if (o == m.small) opts.small = true;
  if (o == m.fast) opts.level = 1;
  if (o == m.best) opts.level = 9;
  if (o == m.progress) opts.progress = true;
  if (o == m.perturb) opts.perturb = true;
  if (o == m.rep_best || o == m.rep_fast)
    say("--%s is redundant in versions 0.9.5 and above", o->get_lnames().front().c_str());
  for (int i = 1; i <= 9; i++)
    if (o == m.level[i]) opts.level = i;
}

// --gpu, else $GPBZIP2_GPU (when not empty), else auto. A bad value is reported with
// where it came from: the variable may have been set long before.
GpuMode gpu_mode(const Model& m) {
  std::string where = "--gpu", value = m.gpu;
  if (m.gpu_option->count() == 0) {
    const char* env = std::getenv("GPBZIP2_GPU");
    if (!env || !*env) return GpuMode::Auto;
    where = "GPBZIP2_GPU";
    value = env;
  }
  if (value == "auto") return GpuMode::Auto;
  if (value == "on") return GpuMode::On;
  if (value == "off") return GpuMode::Off;
  say("%s=%s: the GPU mode is auto, on or off", where.c_str(), value.c_str());
  say("For help, type: `%s --help'.", program_name().c_str());
  std::exit(1);
}

bool name_has(const std::string& name, const char* lower, const char* upper) {
  return name.find(lower) != std::string::npos || name.find(upper) != std::string::npos;
}

}  // namespace

Options parse_command_line(int argc, char** argv) {
  Model m(program_name());
  std::vector<std::string> words;
  add_env_words(words, "BZIP2");
  add_env_words(words, "BZIP");
  for (int i = 1; i < argc; i++) words.emplace_back(argv[i]);
  Split s = split_arguments(m, words);

  Options opts;
  opts.files = s.files;
  for (const auto& f : s.files) opts.longest_name = std::max(opts.longest_name, f.size());
  opts.src = s.files.empty() ? SrcMode::StdinToStdout : SrcMode::FilesToFiles;
  // As bzip2: a name containing "unzip" decompresses, "z2cat" or "zcat" decompresses to stdout.
  const std::string& prog = program_name();
  if (name_has(prog, "unzip", "UNZIP")) opts.op = OpMode::Decompress;
  if (name_has(prog, "z2cat", "Z2CAT") || name_has(prog, "zcat", "ZCAT")) {
    opts.op = OpMode::Decompress;
    opts.src = s.files.empty() ? SrcMode::StdinToStdout : SrcMode::FilesToStdout;
  }

  // CLI11 takes the flags in bzip2's order (all short, then all long) and the files. After a
  // bad short flag bzip2 reads no long flag, so neither does this.
  std::vector<std::string> tokens = s.short_flags;
  if (s.bad_short.empty()) {
    tokens.insert(tokens.end(), s.long_flags.begin(), s.long_flags.end());
    tokens.push_back("--");
    tokens.insert(tokens.end(), s.files.begin(), s.files.end());
  }
  std::reverse(tokens.begin(), tokens.end());  // CLI11 reads a vector from the back
  try {
    m.app.parse(tokens);
  } catch (const CLI::ParseError& e) {
    say("%s", e.what());
    say("For help, type: `%s --help'.", prog.c_str());
    std::exit(1);
  }
  for (const CLI::Option* o : m.app.parse_order()) apply(m, o, opts);
  if (!s.bad_short.empty()) bad_flag(m, s.bad_short);
  if (!s.bad_long.empty()) bad_flag(m, s.bad_long);

  opts.threads = m.threads;
  opts.gpu = gpu_mode(m);
  opts.verbosity = std::min(opts.verbosity, 4);
  if (opts.op == OpMode::Compress && opts.small) opts.level = std::min(opts.level, 2);
  if (opts.op == OpMode::Test && opts.src == SrcMode::FilesToStdout) {
    say("-c and -t cannot be used together.");
    std::exit(1);
  }
  if (opts.src == SrcMode::FilesToStdout && opts.files.empty()) opts.src = SrcMode::StdinToStdout;
  return opts;
}

}  // namespace gpbzip2::cli
