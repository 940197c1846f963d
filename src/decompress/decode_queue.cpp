#include "decode_queue.h"

#include <algorithm>

namespace gpbzip2 {

Page PagePool::take() {
  {
    std::lock_guard lk(mu_);
    if (!free_.empty()) {
      Page p = std::move(free_.back());
      free_.pop_back();
      return p;
    }
  }
  return Page(new uint8_t[kPage]);
}

void PagePool::give(std::vector<Page>& pages, size_t keep) {
  std::lock_guard lk(mu_);
  for (; pages.size() > keep; pages.pop_back()) free_.push_back(std::move(pages.back()));
}

size_t DecodeQueue::max_in_flight() const {
  std::lock_guard lk(mu_);
  return max_in_flight_;
}

void DecodeQueue::submit(TaskPtr t) {
  {
    std::lock_guard lk(mu_);
    fresh_.push_back(std::move(t));
  }
  cpu_cv_.notify_one();
}

void DecodeQueue::wait(const DecodeTask& t) {
  std::unique_lock lk(mu_);
  checking_ = &t;
  // Its batch goes now, full or not.
  if (t.waiting_for_gpu) gpu_cv_.notify_one();
  done_cv_.wait(lk, [&] { return t.done; });
  checking_ = nullptr;
}

void DecodeQueue::stop() {
  {
    std::lock_guard lk(mu_);
    stopped_ = true;
  }
  cpu_cv_.notify_all();
  gpu_cv_.notify_all();
}

bool DecodeQueue::stopped() const {
  std::lock_guard lk(mu_);
  return stopped_;
}

TaskPtr DecodeQueue::pop_for_cpu() {
  std::unique_lock lk(mu_);
  for (;;) {
    cpu_cv_.wait(lk, [&] { return stopped_ || !back_from_gpu_.empty() || !fresh_.empty(); });
    if (stopped_) return nullptr;
    std::deque<TaskPtr>& from = back_from_gpu_.empty() ? fresh_ : back_from_gpu_;
    TaskPtr t = std::move(from.front());
    from.pop_front();
    if (!t->cancelled) return t;
    t->done = true;
    done_cv_.notify_all();
  }
}

bool DecodeQueue::gpu_wants() const {
  std::lock_guard lk(mu_);
  return gpu_lanes_ > 0 && for_gpu_bytes_ < gpu_capacity_;
}

void DecodeQueue::to_gpu(TaskPtr t) {
  {
    std::lock_guard lk(mu_);
    if (gpu_lanes_ == 0) {
      // The last lane left since gpu_wants().
      back_from_gpu_.push_back(std::move(t));
      cpu_cv_.notify_one();
      return;
    }
    for_gpu_bytes_ += t->bwt.size();
    t->waiting_for_gpu = true;
    for_gpu_.push_back(std::move(t));
  }
  gpu_cv_.notify_one();
}

void DecodeQueue::finished(DecodeTask& t) {
  {
    std::lock_guard lk(mu_);
    t.done = true;
  }
  // Only the checker waits here.
  done_cv_.notify_all();
}

void DecodeQueue::add_gpu_lane(size_t batch_blocks, size_t batch_bytes) {
  std::lock_guard lk(mu_);
  gpu_lanes_++;
  gpu_capacity_ += batch_bytes;
  max_in_flight_ += 2 * batch_blocks;
}

void DecodeQueue::remove_gpu_lane() {
  std::lock_guard lk(mu_);
  if (--gpu_lanes_ > 0) return;
  gpu_capacity_ = 0;
  for (; !for_gpu_.empty(); for_gpu_.pop_front()) {
    for_gpu_.front()->waiting_for_gpu = false;
    back_from_gpu_.push_back(std::move(for_gpu_.front()));
  }
  for_gpu_bytes_ = 0;
  cpu_cv_.notify_all();
}

std::vector<TaskPtr> DecodeQueue::pop_gpu_batch(size_t max_blocks, size_t max_bytes) {
  std::unique_lock lk(mu_);
  gpu_cv_.wait(lk, [&] {
    return stopped_ || for_gpu_.size() >= max_blocks || for_gpu_bytes_ >= max_bytes ||
           (checking_ && checking_->waiting_for_gpu);
  });
  std::vector<TaskPtr> batch;
  if (stopped_) return batch;
  size_t bytes = 0;
  while (!for_gpu_.empty() && batch.size() < max_blocks &&
         bytes + for_gpu_.front()->bwt.size() <= max_bytes) {
    bytes += for_gpu_.front()->bwt.size();
    for_gpu_.front()->waiting_for_gpu = false;
    batch.push_back(std::move(for_gpu_.front()));
    for_gpu_.pop_front();
  }
  for_gpu_bytes_ -= bytes;
  return batch;
}

void DecodeQueue::return_from_gpu(std::vector<TaskPtr> tasks) {
  {
    std::lock_guard lk(mu_);
    for (TaskPtr& t : tasks) back_from_gpu_.push_back(std::move(t));
  }
  cpu_cv_.notify_all();
}

}  // namespace gpbzip2
