#include "work_queue.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpbzip2 {
namespace {

// Weight of a new timing in the running estimates: recent batches count most.
constexpr double kLearn = 0.3;

double blend(double old, double sample) { return old > 0 ? old + kLearn * (sample - old) : sample; }

}  // namespace

bool WorkQueue::reader_may_push() const {
  return uncoded_ < max_uncoded_ && in_flight_ < kCodedPerUncoded * max_uncoded_;
}

bool WorkQueue::push_raw(Job job) {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return error_ || reader_may_push(); });
  if (error_) return false;
  uncoded_++;
  in_flight_++;
  raw_bytes_ += job.raw.data.size();
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

double WorkQueue::gpu_bytes_per_sec() const {
  double rate = 0;
  for (const GpuStation& g : gpus_)
    if (g.active)
      rate += g.sec_per_byte > 0 ? 1 / g.sec_per_byte : std::numeric_limits<double>::infinity();
  return rate;
}

// A CPU thread sorts a raw block itself only when the GPUs could not clear the raw queue
// before it would finish that block: a CPU BWT costs far more CPU time than the coding
// of a GPU-sorted block. While GPUs open, it leaves them their first batches: a CPU that
// sorts a block whole then holds up the writer for ~0.1 s just as the GPUs start.
bool WorkQueue::cpu_may_take_raw() const {
  if (raw_.empty()) return false;
  if (gpus_active_ == 0) return raw_.size() > gpu_opening_blocks_;
  double gpu_time = double(raw_bytes_) / gpu_bytes_per_sec();
  return gpu_time > double(raw_.front().raw.data.size()) * cpu_sec_per_byte_;
}

std::optional<Job> WorkQueue::pop_for_cpu() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] {
    return error_ || !sorted_.empty() || cpu_may_take_raw() ||
           (input_closed_ && at_gpu_ == 0 && raw_.empty());
  });
  if (error_) return std::nullopt;
  const bool raw = sorted_.empty();
  std::deque<Job>& from = raw ? raw_ : sorted_;
  if (from.empty()) return std::nullopt;
  std::optional<Job> job(std::move(from.front()));
  from.pop_front();
  if (raw) {
    raw_bytes_ -= job->raw.data.size();
    cpu_raw_started_[job->raw.index] = {Clock::now(), job->raw.data.size()};
  }
  return job;
}

void WorkQueue::reserve_for_gpus(size_t blocks) {
  std::lock_guard lk(mu_);
  max_uncoded_ += 2 * blocks;
  gpu_opening_blocks_ += blocks;
  cv_.notify_all();
}

void WorkQueue::gpu_open_failed(size_t batch_blocks) {
  std::lock_guard lk(mu_);
  gpu_opening_blocks_ -= std::min(batch_blocks, gpu_opening_blocks_);
  cv_.notify_all();
}

int WorkQueue::add_gpu_station(size_t batch_blocks) {
  std::lock_guard lk(mu_);
  gpu_opening_blocks_ -= std::min(batch_blocks, gpu_opening_blocks_);
  gpus_.push_back({});
  gpus_active_++;
  cv_.notify_all();
  return int(gpus_.size() - 1);
}

void WorkQueue::remove_gpu_station(int id) {
  std::lock_guard lk(mu_);
  if (!gpus_[size_t(id)].active) return;
  gpus_[size_t(id)].active = false;
  gpus_active_--;
  cv_.notify_all();
}

// How many of the remaining raw blocks station `id` should take once the input is
// closed: the split that finishes soonest, with the CPUs sorting the rest in waves of
// one block per thread. An untimed station takes what it can.
size_t WorkQueue::gpu_share(int id, size_t max) const {
  size_t avail = std::min(max, raw_.size());
  double spb = gpus_[size_t(id)].sec_per_byte;
  if (!input_closed_ || spb <= 0 || avail == 0) return avail;
  double block = double(raw_bytes_) / double(raw_.size());
  size_t best = avail;
  double best_time = std::numeric_limits<double>::infinity();
  for (size_t k = avail + 1; k-- > 0;) {
    size_t waves = (raw_.size() - k + size_t(cpu_stations_) - 1) / size_t(cpu_stations_);
    double t = std::max(double(k) * block * spb, double(waves) * block * cpu_sec_per_byte_);
    if (t < best_time) {
      best_time = t;
      best = k;
    }
  }
  return best;
}

std::vector<Job> WorkQueue::pop_raw_batch(int id, size_t max) {
  std::unique_lock lk(mu_);
  // A full batch, or whatever there is once no more can come (end of input, or the
  // reader held back by the bounds).
  cv_.wait(lk, [&] {
    return error_ || input_closed_ ||
           (!raw_.empty() && (raw_.size() >= max || !reader_may_push()));
  });
  std::vector<Job> batch;
  if (error_) return batch;
  size_t take = gpu_share(id, max);
  while (batch.size() < take) {
    raw_bytes_ -= raw_.front().raw.data.size();
    batch.push_back(std::move(raw_.front()));
    raw_.pop_front();
  }
  at_gpu_ += batch.size();
  if (batch.empty()) cv_.notify_all();  // the CPUs may now be the only takers
  return batch;
}

void WorkQueue::return_from_gpu(int id, std::vector<Job> jobs, double seconds) {
  std::lock_guard lk(mu_);
  at_gpu_ -= jobs.size();
  size_t bytes = 0;
  for (auto& j : jobs) {
    bytes += j.raw.data.size();
    if (!j.sorted) raw_bytes_ += j.raw.data.size();
    (j.sorted ? sorted_ : raw_).push_back(std::move(j));
  }
  GpuStation& g = gpus_[size_t(id)];
  if (seconds > 0 && bytes > 0) g.sec_per_byte = blend(g.sec_per_byte, seconds / double(bytes));
  cv_.notify_all();
}

void WorkQueue::deliver(CodedBlock block) {
  std::lock_guard lk(mu_);
  uint64_t index = block.index;
  if (auto it = cpu_raw_started_.find(index); it != cpu_raw_started_.end()) {
    double seconds = std::chrono::duration<double>(Clock::now() - it->second.at).count();
    if (it->second.bytes > 0)
      cpu_sec_per_byte_ = blend(cpu_sec_per_byte_, seconds / double(it->second.bytes));
    cpu_raw_started_.erase(it);
  }
  done_.emplace(index, std::move(block));
  uncoded_--;
  cv_.notify_all();
}

void WorkQueue::recycle(std::vector<uint8_t> buffer) {
  std::lock_guard lk(mu_);
  spare_buffers_.push_back(std::move(buffer));
}

std::vector<uint8_t> WorkQueue::spare_buffer() {
  std::lock_guard lk(mu_);
  if (spare_buffers_.empty()) return {};
  std::vector<uint8_t> b = std::move(spare_buffers_.back());
  spare_buffers_.pop_back();
  return b;
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
