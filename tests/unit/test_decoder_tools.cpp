// Decoding what other bzip2 programs write (bzip2, lbzip2, pbzip2's multi-stream files,
// 7-Zip), and the Silesia corpus. Programs that are not installed are skipped.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "generators.h"
#include "test_helpers.h"

namespace fs = std::filesystem;

namespace {

bool have(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// A scratch directory for one test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("gpbzip2_dec_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::vector<uint8_t>& data) const {
    std::ofstream(path / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
    return path / name;
  }
};

std::vector<uint8_t> decode(const std::vector<uint8_t>& bz, int threads) {
  gpbzip2::MemorySource src(bz);
  gpbzip2::VectorSink sink;
  gpbzip2::DecompressOptions o;
  o.threads = threads;
  gpbzip2::decompress_stream(src, &sink, o);
  return sink.data;
}

// Runs `command` (with IN and OUT in the environment naming the files) on `in`.
std::vector<uint8_t> compress_with(const std::string& command, const std::vector<uint8_t>& in) {
  TempDir dir;
  const auto src = dir.write("in", in);
  const auto dst = dir.path / "out.bz2";
  const std::string cmd = "IN='" + src.string() + "' OUT='" + dst.string() + "' sh -c '" + command +
                          "' >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return testing::read_file(dst);
}

std::vector<uint8_t> mixed_input() {
  std::vector<uint8_t> in;
  for (const auto& kind : gpbzip2::corpus::kinds()) {
    const auto part = gpbzip2::corpus::generate(kind, 400000, 3);
    in.insert(in.end(), part.begin(), part.end());
  }
  return in;
}

void check_program(const std::string& program, const std::vector<std::string>& commands) {
  if (!have(program)) {
    WARN(program << " is not installed; skipped");
    return;
  }
  const auto in = mixed_input();
  for (const auto& command : commands) {
    INFO(command);
    const auto bz = compress_with(command, in);
    REQUIRE(bz.size() > 0);
    for (int threads : {1, 2}) REQUIRE(decode(bz, threads) == in);
  }
}

}  // namespace

TEST_CASE("decodes what the bzip2 program writes", "[decoder][tools]") {
  check_program("bzip2", {"bzip2 -1 -c < $IN > $OUT", "bzip2 -5 -c < $IN > $OUT",
                          "bzip2 -9 -c < $IN > $OUT"});
}

TEST_CASE("decodes what lbzip2 writes", "[decoder][tools]") {
  check_program("lbzip2", {"lbzip2 -1 -n2 -c < $IN > $OUT", "lbzip2 -9 -n2 -c < $IN > $OUT"});
}

TEST_CASE("decodes pbzip2's multi-stream files", "[decoder][tools]") {
  check_program("pbzip2", {"pbzip2 -9 -p2 -b3 -c < $IN > $OUT", "pbzip2 -1 -p2 -c < $IN > $OUT"});
}

TEST_CASE("decodes what 7-Zip writes", "[decoder][tools]") {
  check_program("7zz",
                {"7zz a -tbzip2 -mx=9 -mmt=2 $OUT $IN", "7zz a -tbzip2 -mx=1 -mmt=1 $OUT $IN"});
}

TEST_CASE("decodes the Silesia files", "[decoder][silesia]") {
  const auto dir = testing::silesia_dir();
  if (!fs::exists(dir / "dickens")) {
    WARN("Silesia corpus not found at " << dir << "; skipped");
    return;
  }
  // The start of each file keeps this test short; the benchmark decodes them whole.
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto in = testing::read_file(entry.path());
    in.resize(std::min<size_t>(in.size(), 1500000));
    INFO(entry.path().filename().string());
    const auto bz = testing::bzip2_reference(in, 9);
    REQUIRE(decode(bz, 2) == in);
  }
}
