// Unit tests of the work queue's flow control: what the reader may push and what the CPU
// stations may take while blocks are slow or GPUs are opening.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>

#include "compress/work_queue.h"

using gpbzip2::CodedBlock;
using gpbzip2::Job;
using gpbzip2::WorkQueue;
using namespace std::chrono_literals;

namespace {

Job raw_job(uint64_t index) {
  Job job;
  job.raw.index = index;
  job.raw.buffer.reserve(1000);
  std::fill_n(job.raw.buffer.data(), 1000, uint8_t(index));
  job.raw.input_bytes = 1000;
  job.raw.rle_bytes = 1000;
  return job;
}

CodedBlock coded(uint64_t index) {
  CodedBlock b;
  b.index = index;
  b.input_bytes = 1000;
  return b;
}

}  // namespace

TEST_CASE("A slow block at the head does not stop the reader", "[queue]") {
  WorkQueue q(2, 1);
  REQUIRE(q.push_raw(raw_job(0)));
  REQUIRE(q.push_raw(raw_job(1)));
  auto third = std::async(std::launch::async, [&] { return q.push_raw(raw_job(2)); });
  // Two blocks read and not coded: the reader waits.
  REQUIRE(third.wait_for(100ms) == std::future_status::timeout);
  auto head = q.pop_for_cpu();
  auto next = q.pop_for_cpu();
  REQUIRE(head);
  REQUIRE(next);
  REQUIRE(next->raw.index == 1);
  // Block 1 is coded while block 0 is still being worked on: the writer cannot take
  // anything yet, and the reader goes on all the same.
  q.deliver(coded(1));
  const bool ready = third.wait_for(5s) == std::future_status::ready;
  if (!ready) q.abort(std::make_exception_ptr(std::runtime_error("reader stuck")));
  REQUIRE(ready);
  REQUIRE(third.get());
  q.deliver(coded(0));
  REQUIRE(q.take(0)->index == 0);
  REQUIRE(q.take(1)->index == 1);
}

TEST_CASE("While GPUs open, the CPUs prepare their first batches", "[queue]") {
  WorkQueue q(4, 1);
  q.reserve_for_gpus(3);
  for (uint64_t i = 0; i < 3; i++) REQUIRE(q.push_raw(raw_job(i)));
  // The blocks the GPUs will sort first are only prepared...
  for (uint64_t i = 0; i < 3; i++) {
    auto job = q.pop_for_cpu();
    REQUIRE(job);
    REQUIRE(job->prepare_only);
    REQUIRE(job->raw.index == i);
    job->prepared = true;
    q.prepared(std::move(*job));
  }
  // ... and then the CPUs wait.
  auto first = std::async(std::launch::async, [&] { return q.pop_for_cpu(); });
  REQUIRE(first.wait_for(100ms) == std::future_status::timeout);
  // One block more than the GPUs' batches: a CPU compresses the oldest whole.
  REQUIRE(q.push_raw(raw_job(3)));
  REQUIRE(first.wait_for(5s) == std::future_status::ready);
  auto oldest = first.get();
  REQUIRE(oldest->raw.index == 0);
  REQUIRE(!oldest->prepare_only);
  // The GPUs fail to open: the CPUs compress the rest.
  q.gpu_open_failed(3);
  q.close_input(4);
  for (uint64_t i = 1; i < 4; i++) {
    auto job = q.pop_for_cpu();
    REQUIRE(job);
    REQUIRE(job->raw.index == i);
    REQUIRE(!job->prepare_only);
  }
  REQUIRE(!q.pop_for_cpu());
}

TEST_CASE("A recycled buffer comes back to the reader", "[queue]") {
  WorkQueue q(4, 1);
  REQUIRE(q.spare_buffer().empty());
  gpbzip2::ByteBuffer buffer;
  buffer.reserve(5000);
  const uint8_t* memory = buffer.data();
  q.recycle(std::move(buffer));
  gpbzip2::ByteBuffer again = q.spare_buffer();
  REQUIRE(again.data() == memory);
  REQUIRE(again.capacity() == 5000);
  REQUIRE(q.spare_buffer().empty());
}
