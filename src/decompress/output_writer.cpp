#include "output_writer.h"

#include <system_error>

namespace gpbzip2 {

OutputWriter::OutputWriter(Sink& out, PagePool& pages, size_t max_queued,
                           std::function<void(uint64_t, uint64_t)> progress)
    : out_(out), pages_(pages), max_queued_(max_queued), progress_(std::move(progress)) {}

OutputWriter::~OutputWriter() {
  {
    std::lock_guard lk(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OutputWriter::add(BlockOutput block) {
  // The first block is written here and the thread starts with the second, so that an
  // input of one block (a small file) starts none.
  if (max_queued_ == 0 || (written_blocks_ == 0 && !thread_.joinable())) {
    write_block(block);
    written_ += block.bytes;
    written_blocks_++;
    if (progress_) progress_(block.input_end, written_);
    return;
  }
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      max_queued_ = 0;  // no thread to be had: every block is written here
      return add(std::move(block));
    }
  }
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return error_ || queue_.size() < max_queued_; });
  if (error_) std::rethrow_exception(error_);
  queue_.push_back(std::move(block));
  cv_.notify_all();
}

uint64_t OutputWriter::finish() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return error_ || queue_.empty(); });
  if (error_) std::rethrow_exception(error_);
  return written_;
}

void OutputWriter::write_block(BlockOutput& b) {
  if (!b.text.empty()) {
    if (scratch_.empty()) scratch_.resize(kPiece);
    RunExpander runs(b.text.data(), b.text.size());
    while (size_t n = runs.read(scratch_.data(), kPiece)) out_.write(scratch_.data(), n);
  } else {
    for (size_t page = 0, left = b.bytes; left > 0; page++) {
      const size_t k = std::min(left, kPage);
      out_.write(b.pages[page].get(), k);
      left -= k;
    }
    pages_.give(b.pages);
  }
}

void OutputWriter::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return closing_ || !queue_.empty(); });
    if (queue_.empty() || error_) return;
    BlockOutput b = std::move(queue_.front());
    lk.unlock();
    try {
      write_block(b);
    } catch (...) {
      lk.lock();
      error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
    lk.lock();
    // Popped only once written, so that finish() returns after the last write.
    queue_.pop_front();
    written_ += b.bytes;
    if (progress_) progress_(b.input_end, written_);
    cv_.notify_all();
  }
}

}  // namespace gpbzip2
