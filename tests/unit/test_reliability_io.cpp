// Library-level fault injection: a source that fails part way, a sink that fails (as a
// full disk or a closed pipe does). Every pipeline thread must stop, the caller must get
// the original error, and nothing may be written after the failure.
#include <catch2/catch.hpp>

#include <cstring>

#include "generators.h"
#include "test_helpers.h"

namespace {

using gpbzip2::Error;
using gpbzip2::ErrorKind;

class FailingSink final : public gpbzip2::Sink {
 public:
  explicit FailingSink(int fail_on_call) : fail_on_call_(fail_on_call) {}
  void write(const uint8_t* buf, size_t n) override {
    calls++;
    if (calls >= fail_on_call_) throw Error(ErrorKind::Io, "injected write error: No space left on device");
    data.insert(data.end(), buf, buf + n);
  }
  int calls = 0;
  std::vector<uint8_t> data;

 private:
  int fail_on_call_;
};

template <class F>
void require_io_error(F&& f, const char* what) {
  try {
    f();
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::Io);
    REQUIRE(std::string(e.what()) == what);
  }
}

gpbzip2::CompressOptions options(int level, int threads) {
  gpbzip2::CompressOptions o;
  o.level = level;
  o.threads = threads;
  o.gpu = gpbzip2::GpuMode::Off;
  return o;
}

const std::vector<uint8_t>& sample() {
  static const auto data = gpbzip2::corpus::generate("text", 2500000, 11);
  return data;
}

}  // namespace

TEST_CASE("compression: read error at any point stops every thread", "[reliability][io]") {
  for (int threads : {1, 2, 4}) {
    for (size_t at : {size_t(0), size_t(1), size_t(99980), size_t(1) << 20, sample().size() - 1}) {
      INFO("threads " << threads << " at " << at);
      testing::PieceSource src(sample(), 70001, at);
      gpbzip2::VectorSink sink;
      require_io_error([&] { gpbzip2::compress_stream(src, sink, options(1, threads)); },
                       "injected read error");
    }
  }
}

TEST_CASE("compression: write error stops the pipeline, nothing written after it", "[reliability][io]") {
  const auto ref = testing::bzip2_reference(sample(), 1);
  for (int threads : {1, 2, 4}) {
    for (int fail_on : {1, 2, 7}) {
      INFO("threads " << threads << " fail on write " << fail_on);
      gpbzip2::MemorySource src(sample());
      FailingSink sink(fail_on);
      require_io_error([&] { gpbzip2::compress_stream(src, sink, options(1, threads)); },
                       "injected write error: No space left on device");
      REQUIRE(sink.calls == fail_on);
      // What reached the sink before the failure is a prefix of bzip2's output.
      REQUIRE(sink.data.size() < ref.size());
      REQUIRE(std::equal(sink.data.begin(), sink.data.end(), ref.begin()));
    }
  }
}

TEST_CASE("decompression: read error at any point", "[reliability][io]") {
  const auto bz = testing::bzip2_reference(sample(), 1);
  for (int threads : {1, 2, 4}) {
    for (size_t at : {size_t(0), size_t(3), size_t(4), bz.size() / 3, bz.size() - 1}) {
      INFO("threads " << threads << " at " << at);
      testing::PieceSource src(bz, 70001, at);
      gpbzip2::VectorSink sink;
      gpbzip2::DecompressOptions o;
      o.threads = threads;
      require_io_error([&] { gpbzip2::decompress_stream(src, &sink, o); }, "injected read error");
      REQUIRE(sink.data.size() <= sample().size());
      REQUIRE(std::equal(sink.data.begin(), sink.data.end(), sample().begin()));
    }
  }
}

TEST_CASE("decompression: write error stops the pipeline, nothing written after it", "[reliability][io]") {
  const auto bz = testing::bzip2_reference(sample(), 1);
  for (int threads : {1, 2, 4}) {
    for (int fail_on : {1, 2, 7}) {
      INFO("threads " << threads << " fail on write " << fail_on);
      gpbzip2::MemorySource src(bz);
      FailingSink sink(fail_on);
      gpbzip2::DecompressOptions o;
      o.threads = threads;
      require_io_error([&] { gpbzip2::decompress_stream(src, &sink, o); },
                       "injected write error: No space left on device");
      REQUIRE(sink.calls == fail_on);
      REQUIRE(std::equal(sink.data.begin(), sink.data.end(), sample().begin()));
    }
  }
}
