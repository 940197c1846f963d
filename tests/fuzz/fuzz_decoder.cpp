// Decoder against libbzip2 on arbitrary bytes: whatever decompress_stream accepts, bzip2
// accepts with the same output; whatever bzip2 accepts, we accept; before an error we
// write only a prefix of what bzip2 writes; the check-only mode (out == nullptr) agrees.
// The one deliberate difference: we reject oversubscribed Huffman tables, which
// libbzip2 does not check.
#include <cstring>
#include <string>

#include "fuzz_common.h"
#include "gpbzip2.h"

namespace {

// Compares what the decoder writes with bzip2's output as it arrives.
class ComparingSink final : public gpbzip2::Sink {
 public:
  explicit ComparingSink(const std::vector<uint8_t>& want) : want_(want) {}
  void write(const uint8_t* buf, size_t n) override {
    fuzz::check(pos_ + n <= want_.size(), "decoder wrote more than bzip2");
    fuzz::check(std::memcmp(buf, want_.data() + pos_, n) == 0, "decoder wrote bytes bzip2 does not");
    pos_ += n;
  }
  size_t pos_ = 0;

 private:
  const std::vector<uint8_t>& want_;
};

struct Verdict {
  bool ok = false;
  gpbzip2::ErrorKind kind{};
  std::string what;
  uint64_t bytes_out = 0;
};

Verdict run(const std::vector<uint8_t>& in, gpbzip2::Sink* out, int threads, uint32_t chunking) {
  fuzz::ChunkedSource src(in, chunking);
  gpbzip2::DecompressOptions opts;
  opts.threads = threads;
  Verdict v;
  try {
    v.bytes_out = gpbzip2::decompress_stream(src, out, opts).bytes_out;
    v.ok = true;
  } catch (const gpbzip2::Error& e) {
    v.kind = e.kind();
    v.what = e.what();
  }
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> in(data, data + size);
  // Small inputs can describe gigabytes; past 64 MiB of output the input is skipped.
  const size_t cap = size_t(64) << 20;
  const auto ref = fuzz::bzip2_decompress(in, cap);
  if (ref.out.size() > cap) return 0;

  for (int threads : {1, 3}) {
    ComparingSink sink(ref.out);
    const Verdict v = run(in, &sink, threads, uint32_t(size) + uint32_t(threads));
    if (v.ok) {
      fuzz::check(ref.ok, "decoder accepted what bzip2 rejects");
      fuzz::check(sink.pos_ == ref.out.size(), "decoder wrote less than bzip2");
      fuzz::check(v.bytes_out == ref.out.size(), "bytes_out");
    } else {
      fuzz::check(v.kind != gpbzip2::ErrorKind::Internal && v.kind != gpbzip2::ErrorKind::Io,
                  "decoder failed with an internal or I/O error");
      fuzz::check(!ref.ok || v.what.find("oversubscribed Huffman table") != std::string::npos,
                  "decoder rejected what bzip2 accepts");
    }
    const Verdict test = run(in, nullptr, threads, 7);
    fuzz::check(test.ok == v.ok && test.kind == v.kind, "check-only mode disagrees");
  }
  return 0;
}
