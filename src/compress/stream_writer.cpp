#include "stream_writer.h"

#include "common/crc32.h"
#include "common/format.h"

namespace gpbzip2 {

StreamWriter::StreamWriter(Sink& sink, int level) : sink_(sink) {
  for (char c : {'B', 'Z', 'h', char('0' + level)}) bits_.put(8, uint8_t(c));
}

void StreamWriter::add(const CodedBlock& block) {
  bits_.append(block.bits.data(), block.nbits);
  stream_crc_ = combine_stream_crc(stream_crc_, block.crc);
  flush_whole_bytes();
}

void StreamWriter::finish() {
  bits_.put48(format::kEndMagic);
  bits_.put(32, stream_crc_);
  auto& rest = bits_.finish();
  sink_.write(rest.data(), rest.size());
  written_ += rest.size();
  rest.clear();
}

void StreamWriter::flush_whole_bytes() {
  bits_.take_whole_bytes(out_);
  sink_.write(out_.data(), out_.size());
  written_ += out_.size();
}

}  // namespace gpbzip2
