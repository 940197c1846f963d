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
      *progress;
  CLI::Option* level[10] = {};
  int threads = 0;
  std::string gpu = "auto";
  std::vector<std::string> files;

  explicit Model(const std::string& prog);
};

Model::Model(const std::string& prog)
    : app("gpbzip2, a parallel bzip2-compatible file compressor.  Version " GPBZIP2_VERSION ".",
          prog) {
  app.set_help_flag();  // -h is handled in flag order below, as bzip2 does
  app.get_formatter()->column_width(26);
  help = app.add_flag("-h,--help")->description("print this message");
  decompress = app.add_flag("-d,--decompress")->description("force decompression");
  compress = app.add_flag("-z,--compress")->description("force compression");
  keep = app.add_flag("-k,--keep")->description("keep (don't delete) input files");
  force = app.add_flag("-f,--force")->description("overwrite existing output files");
  test = app.add_flag("-t,--test")->description("test compressed file integrity");
  to_stdout = app.add_flag("-c,--stdout")->description("output to standard out");
  quiet = app.add_flag("-q,--quiet")->description("suppress noncritical error messages");
  verbose = app.add_flag("-v,--verbose")->description("be verbose (a 2nd -v gives more)");
  license = app.add_flag("-L,--license")->description("display version, build and GPUs");
  version = app.add_flag("-V,--version")->description("display version, build and GPUs");
  small = app.add_flag("-s,--small")->description("accepted for bzip2 (compression: -2 at most)");
  for (int i = 1; i <= 9; i++) level[i] = app.add_flag("-" + std::to_string(i))->group("");
  level[1]->description("100k blocks (fastest)")->group("Options");
  level[9]->description("900k blocks (default, best)")->group("Options");
  fast = app.add_flag("--fast")->description("alias for -1");
  best = app.add_flag("--best")->description("alias for -9");
  app.add_option("-n,--threads", threads, "compute threads (default: one per core)")
      ->check(CLI::Range(1, 4096))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--gpu", gpu, "use a GPU: auto (when present), on (required), off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->envname("GPBZIP2_GPU")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  progress = app.add_flag("--progress")->description("show progress even when stderr is no terminal");
  exponential = app.add_flag("--exponential")->group("");
  rep_best = app.add_flag("--repetitive-best")->group("");
  rep_fast = app.add_flag("--repetitive-fast")->group("");
  app.add_option("FILE", files, "files to work on (none: stdin to stdout)");
  app.footer(
      "If invoked as `gpbzip2', default action is to compress.\n"
      "           as `gpbunzip2', default action is to decompress.\n"
      "           as `gpbzcat', default action is to decompress to stdout.\n"
      "\n"
      "If no file names are given, gpbzip2 compresses or decompresses from standard\n"
      "input to standard output.  Short flags combine: `-v -4' is the same as -v4 or\n"
      "-4v.  $BZIP2 and $BZIP hold default flags; $GPBZIP2_GPU sets --gpu.");
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
  std::fputs(m.app.help().c_str(), stderr);
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
  if (o == m.rep_best || o == m.rep_fast)
    say("--%s is redundant in versions 0.9.5 and above", o->get_lnames().front().c_str());
  for (int i = 1; i <= 9; i++)
    if (o == m.level[i]) opts.level = i;
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
  opts.gpu = m.gpu == "on" ? GpuMode::On : m.gpu == "off" ? GpuMode::Off : GpuMode::Auto;
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
