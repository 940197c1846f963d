#include "work_queue.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpbzip2 {
namespace {

// Weight of a new timing in the running estimates: recent batches count most.
constexpr double kLearn = 0.3;

double blend(double old, double sample) { return old > 0 ? old + kLearn * (sample - old) : sample; }

Job take_front(std::deque<Job>& from) {
  Job job = std::move(from.front());
  from.pop_front();
  return job;
}

}  // namespace

bool WorkQueue::reader_may_push() const {
  return uncoded_ < max_uncoded_ && in_flight_ < kCodedPerUncoded * max_uncoded_;
}

bool WorkQueue::push_raw(Job job, std::optional<uint64_t> coming) {
  std::unique_lock lk(mu_);
  reader_cv_.wait(lk, [&] { return error_ || reader_may_push(); });
  if (error_) return false;
  coming_ = coming;
  uncoded_++;
  in_flight_++;
  unsorted_bytes_ += job.raw.rle_bytes;
  input_.push_back(std::move(job));
  cpu_cv_.notify_one();
  return true;
}

void WorkQueue::close_input(uint64_t total_blocks) {
  std::lock_guard lk(mu_);
  input_closed_ = true;
  total_blocks_ = total_blocks;
  cpu_cv_.notify_all();
  gpu_cv_.notify_all();
  writer_cv_.notify_one();
}

double WorkQueue::gpu_bytes_per_sec() const {
  double rate = 0;
  for (const GpuStation& g : gpus_)
    if (g.active)
      rate += g.sec_per_byte > 0 ? 1 / g.sec_per_byte : std::numeric_limits<double>::infinity();
  return rate;
}

// A CPU thread sorts a block itself only when the GPUs could not clear the unsorted
// blocks before it would finish that one: a CPU BWT costs far more CPU time than the
// coding of a GPU-sorted block. While GPUs open, it leaves them their first batches: a
// CPU that sorts a block whole then holds up the writer for ~0.1 s just as the GPUs start.
bool WorkQueue::cpu_may_compress() const {
  const size_t unsorted = ready_.size() + input_.size();
  if (unsorted == 0) return false;
  if (gpus_active_ == 0) return unsorted > gpu_opening_blocks_;
  const Job& oldest = ready_.empty() ? input_.front() : ready_.front();
  const double gpu_time = double(unsorted_bytes_) / gpu_bytes_per_sec();
  return gpu_time > double(oldest.raw.rle_bytes) * cpu_sec_per_byte_;
}

bool WorkQueue::cpus_done() const {
  return input_closed_ && input_.empty() && ready_.empty() && sorted_.empty() &&
         declined_.empty() && at_gpu_ == 0 && preparing_ == 0;
}

// Preparing a block (run-length coding and CRC, about a tenth of its coding time) comes
// first while a GPU waits for a batch; else coding frees memory first.
std::optional<Job> WorkQueue::take_for_cpu() {
  auto to_prepare = [&] {
    Job job = take_front(input_);
    job.prepare_only = true;
    preparing_++;
    return job;
  };
  if (gpus_present() && gpus_waiting_ > 0 && !input_.empty()) return to_prepare();
  if (!sorted_.empty()) return take_front(sorted_);
  if (!declined_.empty()) return take_front(declined_);
  if (cpu_may_compress()) {
    // The oldest block: prepared ones were read before any still in input_.
    Job job = ready_.empty() ? take_front(input_) : take_front(ready_);
    unsorted_bytes_ -= job.raw.rle_bytes;
    cpu_raw_started_[job.raw.index] = {Clock::now(), job.raw.rle_bytes};
    notify_gpus();  // input_ may now be empty: a partial batch may go
    return job;
  }
  if (gpus_present() && !input_.empty()) return to_prepare();
  return std::nullopt;
}

void WorkQueue::cpu_station_added() {
  std::lock_guard lk(mu_);
  cpu_started_++;
}

// For a block just taken: 0 unless it is shared, else the stations for each block still
// to sort, those held by stations (this one included) and those left to start.
int WorkQueue::share_threads(const Job& job) const {
  const int sharing = std::min(cpu_started_, sharing_);
  if (sharing < kShareMinStations || job.raw.rle_bytes < kShareMinBytes) return 0;
  if (!(input_closed_ || coming_)) return 0;
  const uint64_t queued = input_.size() + ready_.size() + declined_.size();
  const uint64_t left = queued + (input_closed_ ? 0 : *coming_);
  if (left >= share_below(sharing)) return 0;
  const uint64_t held = uncoded_ - std::min(uncoded_, queued + sorted_.size() + at_gpu_);
  return int(std::max<uint64_t>(1, uint64_t(sharing) / std::max<uint64_t>(1, held + left)));
}

// A station out of work stays while others still hold jobs, to help with their sorts.
std::optional<Job> WorkQueue::pop_for_cpu() {
  std::unique_lock lk(mu_);
  for (;;) {
    if (error_) return std::nullopt;
    if (auto job = take_for_cpu()) {
      if (!job->prepare_only && !job->sorted) job->share_threads = share_threads(*job);
      if (job->share_threads > 0) cpu_raw_started_.erase(job->raw.index);  // not one thread's time
      return job;
    }
    if (auto o = std::find_if(offers_.begin(), offers_.end(),
                              [](const Offer* o) { return o->next < o->count; });
        o != offers_.end()) {
      Offer& offer = **o;
      offer.helpers++;
      lk.unlock();
      std::exception_ptr failed;
      try {
        for (size_t i; (i = offer.next.fetch_add(1)) < offer.count;) (*offer.body)(i);
      } catch (...) {
        failed = std::current_exception();
      }
      lk.lock();
      if (failed && !offer.error) offer.error = failed;
      if (--offer.helpers == 0) helped_cv_.notify_all();
      continue;
    }
    if (input_closed_ && uncoded_ == 0) return std::nullopt;  // every block delivered
    cpu_cv_.wait(lk);
  }
}

void WorkQueue::run_together(size_t tasks, const std::function<void(size_t)>& body) {
  Offer offer;
  offer.body = &body;
  offer.count = tasks;
  {
    std::lock_guard lk(mu_);
    offers_.push_back(&offer);
    cpu_cv_.notify_all();
  }
  std::exception_ptr failed;
  try {
    for (size_t i; (i = offer.next.fetch_add(1)) < offer.count;) body(i);
  } catch (...) {
    failed = std::current_exception();
  }
  // The helpers' tasks use this station's memory: wait for them even after a failure.
  std::unique_lock lk(mu_);
  std::erase(offers_, &offer);
  helped_cv_.wait(lk, [&] { return offer.helpers == 0; });
  if (!failed) failed = offer.error;
  if (failed) std::rethrow_exception(failed);
}

void WorkQueue::prepared(Job job) {
  std::lock_guard lk(mu_);
  preparing_--;
  job.prepare_only = false;
  ready_.push_back(std::move(job));
  notify_gpus();
  // No GPU left to sort it (they failed meanwhile): a CPU will.
  if (!gpus_present()) cpu_cv_.notify_one();
}

void WorkQueue::kept(const Job& job) {
  std::lock_guard lk(mu_);
  preparing_--;
  unsorted_bytes_ -= job.raw.rle_bytes;
  notify_gpus();  // none coming may now make a partial batch go
}

bool WorkQueue::gpu_stations_open() {
  std::lock_guard lk(mu_);
  return gpus_active_ > 0;
}

bool WorkQueue::input_closed() {
  std::lock_guard lk(mu_);
  return input_closed_;
}

bool WorkQueue::all_taken() {
  std::lock_guard lk(mu_);
  return cpus_done();
}

void WorkQueue::reserve_for_gpus(size_t blocks) {
  std::lock_guard lk(mu_);
  max_uncoded_ += blocks;
  gpu_opening_blocks_ += blocks;
  gpu_found_ = true;
  reader_cv_.notify_one();
  cpu_cv_.notify_all();
}

void WorkQueue::gpu_open_failed(size_t batch_blocks) {
  std::lock_guard lk(mu_);
  gpu_opening_blocks_ -= std::min(batch_blocks, gpu_opening_blocks_);
  if (!gpus_present()) gpus_lost_ = true;
  cpu_cv_.notify_all();
}

int WorkQueue::add_gpu_station(size_t batch_blocks) {
  std::lock_guard lk(mu_);
  gpu_opening_blocks_ -= std::min(batch_blocks, gpu_opening_blocks_);
  gpu_batch_blocks_ = std::max(gpu_batch_blocks_, batch_blocks);
  gpus_.push_back({});
  gpus_active_++;
  cpu_cv_.notify_all();
  return int(gpus_.size() - 1);
}

void WorkQueue::remove_gpu_station(int id) {
  std::lock_guard lk(mu_);
  if (!gpus_[size_t(id)].active) return;
  gpus_[size_t(id)].active = false;
  gpus_active_--;
  if (!gpus_present()) gpus_lost_ = true;
  cpu_cv_.notify_all();
}

// How many of the remaining unsorted blocks station `id` should take once the input is
// closed: the split that finishes soonest, with the CPUs sorting the rest in waves of
// one block per thread. An untimed station takes what it can.
size_t WorkQueue::gpu_share(int id, size_t max) const {
  size_t avail = std::min(max, ready_.size());
  double spb = gpus_[size_t(id)].sec_per_byte;
  if (!input_closed_ || spb <= 0 || avail == 0) return avail;
  const size_t unsorted = ready_.size() + input_.size() + preparing_;
  double block = double(unsorted_bytes_) / double(unsorted);
  size_t best = avail;
  double best_time = std::numeric_limits<double>::infinity();
  for (size_t k = avail + 1; k-- > 0;) {
    size_t waves = (unsorted - k + size_t(cpu_stations_) - 1) / size_t(cpu_stations_);
    double t = std::max(double(k) * block * spb, double(waves) * block * cpu_sec_per_byte_);
    if (t < best_time) {
      best_time = t;
      best = k;
    }
  }
  return best;
}

// A full batch, or whatever there is once no more can come soon (nothing left to
// prepare, and the input ended or the reader is held back by the bounds).
bool WorkQueue::gpu_batch_ready(size_t max) const {
  if (ready_.size() >= max) return true;
  const bool none_coming =
      input_.empty() && preparing_ == 0 && (input_closed_ || !reader_may_push());
  return none_coming && (!ready_.empty() || input_closed_);
}

void WorkQueue::notify_gpus() {
  if (gpus_waiting_ > 0 && gpu_batch_ready(gpu_batch_blocks_)) gpu_cv_.notify_all();
}

std::vector<Job> WorkQueue::pop_raw_batch(int id, size_t max) {
  std::unique_lock lk(mu_);
  gpus_waiting_++;
  gpu_cv_.wait(lk, [&] { return error_ || gpu_batch_ready(max); });
  gpus_waiting_--;
  std::vector<Job> batch;
  if (error_) return batch;
  size_t take = gpu_share(id, max);
  while (batch.size() < take) {
    unsorted_bytes_ -= ready_.front().raw.rle_bytes;
    batch.push_back(take_front(ready_));
  }
  at_gpu_ += batch.size();
  if (batch.empty()) cpu_cv_.notify_all();  // the CPUs may now be the only takers
  return batch;
}

bool WorkQueue::gpu_moves_to_front() {
  std::lock_guard lk(mu_);
  const bool gpus_keep_up = ready_.size() + input_.size() <= gpu_batch_blocks_;
  const bool coders_behind = sorted_.size() > 2 * gpu_batch_blocks_;
  return gpus_keep_up || coders_behind;
}

void WorkQueue::return_from_gpu(int id, std::vector<Job> jobs, double seconds) {
  std::lock_guard lk(mu_);
  at_gpu_ -= jobs.size();
  size_t bytes = 0;
  for (auto& j : jobs) {
    bytes += j.raw.rle_bytes;
    (j.sorted ? sorted_ : declined_).push_back(std::move(j));
  }
  GpuStation& g = gpus_[size_t(id)];
  if (seconds > 0 && bytes > 0) g.sec_per_byte = blend(g.sec_per_byte, seconds / double(bytes));
  cpu_cv_.notify_all();
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
  if (uncoded_ == 0 && input_closed_) cpu_cv_.notify_all();  // the stations may leave
  reader_cv_.notify_one();
  if (index == writer_wants_) writer_cv_.notify_one();
}

void WorkQueue::recycle(ByteVector buffer) {
  if (buffer.empty()) return;
  std::lock_guard lk(mu_);
  spare_buffers_.push_back(std::move(buffer));
}

ByteVector WorkQueue::spare_buffer() {
  std::lock_guard lk(mu_);
  if (spare_buffers_.empty()) return {};
  ByteVector b = std::move(spare_buffers_.back());
  spare_buffers_.pop_back();
  return b;
}

std::optional<CodedBlock> WorkQueue::take(uint64_t index) {
  std::unique_lock lk(mu_);
  writer_wants_ = index;
  writer_cv_.wait(lk, [&] {
    return error_ || done_.count(index) || (input_closed_ && index >= total_blocks_);
  });
  auto it = done_.find(index);
  if (error_ || it == done_.end()) return std::nullopt;
  CodedBlock b = std::move(it->second);
  done_.erase(it);
  in_flight_--;
  reader_cv_.notify_one();
  return b;
}

void WorkQueue::abort(std::exception_ptr error) {
  std::lock_guard lk(mu_);
  if (!error_) error_ = error;
  reader_cv_.notify_all();
  cpu_cv_.notify_all();
  gpu_cv_.notify_all();
  writer_cv_.notify_all();
}

std::exception_ptr WorkQueue::error() const {
  std::lock_guard lk(mu_);
  return error_;
}

}  // namespace gpbzip2
