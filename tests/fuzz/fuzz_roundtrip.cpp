// Round trip: for any data, level and thread count, compress_stream writes exactly the
// bytes `bzip2 -<level>` writes, and both libbzip2 and decompress_stream decode them back
// to the data.
#include "fuzz_common.h"
#include "gpbzip2.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int level = 1 + data[0] % 9;
  const int threads = 1 + data[1] % 3;
  // Enough for several level-1 blocks while keeping each run short.
  const std::vector<uint8_t> in = fuzz::expand(data + 2, size - 2, 400000);

  fuzz::ChunkedSource src(in, uint32_t(size));
  gpbzip2::VectorSink sink;
  gpbzip2::CompressOptions opts;
  opts.level = level;
  opts.threads = threads;
  opts.gpu = gpbzip2::GpuMode::Off;
  const auto totals = gpbzip2::compress_stream(src, sink, opts);
  fuzz::check(totals.bytes_in == in.size(), "bytes_in");
  fuzz::check(totals.bytes_out == sink.data.size(), "bytes_out");
  fuzz::check(sink.data == fuzz::bzip2_compress(in, level), "compressed bytes differ from bzip2's");

  const auto back = fuzz::bzip2_decompress(sink.data);
  fuzz::check(back.ok && back.out == in, "libbzip2 does not decode it back to the input");

  fuzz::ChunkedSource packed(sink.data, uint32_t(size) * 7);
  gpbzip2::VectorSink unpacked;
  gpbzip2::DecompressOptions dopts;
  dopts.threads = 4 - threads;
  const auto dtotals = gpbzip2::decompress_stream(packed, &unpacked, dopts);
  fuzz::check(unpacked.data == in, "decompress_stream does not give back the input");
  fuzz::check(dtotals.streams == 1 && !dtotals.trailing_garbage, "stream count");
  fuzz::check(dtotals.bytes_in == sink.data.size() && dtotals.bytes_out == in.size(), "decompress totals");
  return 0;
}
