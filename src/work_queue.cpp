#include "work_queue.h"

namespace gpbzip2 {

bool WorkQueue::push_raw(Job job) {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return error_ || in_flight_ < max_in_flight_; });
  if (error_) return false;
  in_flight_++;
  raw_.push_back(std::move(job));
  cv_.notify_all();
  return true;
}

void WorkQueue::close_input(uint64_t total_blocks) {
  std::lock_guard lk(mu_);
  input_closed_ = true;
  total_blocks_ = total_blocks;
  cv_.notify_all();
}

std::optional<Job> WorkQueue::pop_for_cpu() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] {
    return error_ || !sorted_.empty() || !raw_.empty() || (input_closed_ && at_gpu_ == 0);
  });
  if (error_) return std::nullopt;
  auto& lane = !sorted_.empty() ? sorted_ : raw_;
  if (lane.empty()) return std::nullopt;
  Job job = std::move(lane.front());
  lane.pop_front();
  return job;
}

std::vector<Job> WorkQueue::pop_raw_batch(size_t max) {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return error_ || !raw_.empty() || input_closed_; });
  std::vector<Job> batch;
  while (!error_ && !raw_.empty() && batch.size() < max) {
    batch.push_back(std::move(raw_.front()));
    raw_.pop_front();
  }
  at_gpu_ += batch.size();
  return batch;
}

void WorkQueue::return_from_gpu(std::vector<Job> jobs) {
  std::lock_guard lk(mu_);
  at_gpu_ -= jobs.size();
  for (auto& j : jobs) (j.sorted ? sorted_ : raw_).push_back(std::move(j));
  cv_.notify_all();
}

void WorkQueue::deliver(CodedBlock block) {
  std::lock_guard lk(mu_);
  uint64_t index = block.index;
  done_.emplace(index, std::move(block));
  cv_.notify_all();
}

std::optional<CodedBlock> WorkQueue::take(uint64_t index) {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] {
    return error_ || done_.count(index) || (input_closed_ && index >= total_blocks_);
  });
  auto it = done_.find(index);
  if (error_ || it == done_.end()) return std::nullopt;
  CodedBlock b = std::move(it->second);
  done_.erase(it);
  in_flight_--;
  cv_.notify_all();
  return b;
}

void WorkQueue::abort(std::exception_ptr error) {
  std::lock_guard lk(mu_);
  if (!error_) error_ = error;
  cv_.notify_all();
}

std::exception_ptr WorkQueue::error() const {
  std::lock_guard lk(mu_);
  return error_;
}

}  // namespace gpbzip2
