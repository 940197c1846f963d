// Unit tests of the work queue's flow control: what the reader may push and what the CPU
// stations may take while blocks are slow or GPUs are opening, and the path of blocks
// prepared for a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>

#include <atomic>
#include <thread>

#include "common/gpu.h"
#include "compress/block_reader.h"
#include "compress/cpu_station.h"
#include "compress/stream_writer.h"
#include "compress/work_queue.h"
#include "generators.h"
#include "test_helpers.h"

using gpbzip2::CodedBlock;
using gpbzip2::Job;
using gpbzip2::WorkQueue;
using namespace std::chrono_literals;

namespace {

Job raw_job(uint64_t index) {
  Job job;
  job.raw.index = index;
  job.raw.buffer.resize(1000);
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
  // Once every block is delivered, nothing is left for a station (one out of work waits
  // while others hold blocks, to help sort them).
  for (uint64_t i = 0; i < 4; i++) q.deliver(coded(i));
  REQUIRE(!q.pop_for_cpu());
}

// CPU stations held back for GPUs start after all once none is coming: none was found,
// every lane failed to open, or every station left.
TEST_CASE("GPUs count as lost only once none is open or opening", "[queue]") {
  WorkQueue none(4, 1);
  REQUIRE(!none.gpus_lost());
  none.no_gpu_found();
  REQUIRE(none.gpus_lost());

  WorkQueue failed(4, 1);
  failed.reserve_for_gpus(2);
  failed.reserve_for_gpus(2);
  failed.gpu_open_failed(2);
  REQUIRE(!failed.gpus_lost());  // the other lane still opens
  failed.gpu_open_failed(2);
  REQUIRE(failed.gpus_lost());

  WorkQueue left(4, 1);
  left.reserve_for_gpus(2);
  left.reserve_for_gpus(2);
  const int a = left.add_gpu_station(2);
  REQUIRE(!left.gpus_lost());
  const int b = left.add_gpu_station(2);
  left.remove_gpu_station(a);
  REQUIRE(!left.gpus_lost());  // b still sorts
  left.remove_gpu_station(b);
  REQUIRE(left.gpus_lost());
}

TEST_CASE("A recycled buffer comes back to the reader", "[queue]") {
  WorkQueue q(4, 1);
  REQUIRE(q.spare_buffer().empty());
  gpbzip2::ByteVector buffer;
  buffer.resize(5000);
  const uint8_t* memory = buffer.data();
  q.recycle(std::move(buffer));
  gpbzip2::ByteVector again = q.spare_buffer();
  REQUIRE(again.data() == memory);
  REQUIRE(again.size() == 5000);
  REQUIRE(q.spare_buffer().empty());
}

// The GPU path without a GPU: a lane that sorts its batches with the CPU sort (and hands
// every third block back unsorted, as a GPU does periodic ones), fed by CPU stations that
// prepare blocks, and the stream must still be bzip2's.
TEST_CASE("Blocks prepared for a GPU lane come out as bzip2's", "[queue]") {
  const int level = 1;
  auto in = gpbzip2::corpus::generate("text", 1500000, 1);
  const auto runs = gpbzip2::corpus::generate("runs", 3000000, 2);
  in.insert(in.end(), runs.begin(), runs.end());
  gpbzip2::MemorySource src(in);
  gpbzip2::BlockReader reader(src, level);
  WorkQueue q(6, 2);
  q.reserve_for_gpus(4);
  const int id = q.add_gpu_station(4);
  std::atomic<size_t> sorted{0}, unprepared{0};
  std::thread lane([&] {
    gpbzip2::BwtWorkspace ws;
    for (size_t n = 0;;) {
      std::vector<Job> batch = q.pop_raw_batch(id, 4);
      if (batch.empty()) break;
      for (Job& j : batch) {
        unprepared += !j.prepared;
        if (n++ % 3 == 2) continue;
        // As a GPU lane leaves it: the last column or (for some) its MTF positions over
        // the text.
        gpbzip2::BwtResult r;
        gpbzip2::bwt_forward(j.text().data(), int32_t(j.text().size()), ws, r);
        r.moved_to_front = n % 2 == 0;
        if (r.moved_to_front)
          for (uint8_t c : j.text()) r.in_use[c] = true;
        const std::vector<uint8_t> bytes =
            r.moved_to_front ? testing::mtf_positions(r.last) : r.last;
        std::copy(bytes.begin(), bytes.end(), j.raw.buffer.data());
        r.last.clear();
        j.sorted = std::move(r);
        sorted++;
      }
      q.return_from_gpu(id, std::move(batch), 0.01);
    }
    q.remove_gpu_station(id);
  });
  std::vector<std::thread> cpus;
  for (int i = 0; i < 2; i++) cpus.emplace_back(gpbzip2::run_cpu_station, std::ref(q), false);
  gpbzip2::VectorSink sink;
  gpbzip2::StreamWriter writer(sink, level);
  std::thread write([&] {
    for (uint64_t i = 0;; i++) {
      auto block = q.take(i);
      if (!block) break;
      writer.add(*block);
    }
  });
  uint64_t blocks = 0;
  for (Job job; reader.next(job.raw); blocks++) {
    REQUIRE(q.push_raw(std::move(job)));
    job = Job();
    job.raw.buffer = q.spare_buffer();
  }
  q.close_input(blocks);
  lane.join();
  for (auto& t : cpus) t.join();
  write.join();
  REQUIRE(!q.error());
  writer.finish();
  REQUIRE(sorted > 0);
  REQUIRE(unprepared == 0);
  REQUIRE(sink.data == testing::bzip2_reference(in, level));
}

TEST_CASE("GpuGate: --gpu=on waits for one open lane, and fails only once all failed", "[queue]") {
  const std::string why = "out of memory";
  gpbzip2::GpuGate opens(3);
  std::thread lanes([&] {
    opens.report(&why);
    opens.report(nullptr);
    opens.report(&why);
  });
  opens.wait_usable();  // returns: one lane opened
  lanes.join();

  gpbzip2::GpuGate fails(2);
  std::thread failing([&] {
    fails.report(&why);
    fails.report(&why);
  });
  try {
    fails.wait_usable();
    FAIL("no error with every lane failed");
  } catch (const gpbzip2::Error& e) {
    REQUIRE(e.kind() == gpbzip2::ErrorKind::Io);
    REQUIRE(std::string(e.what()) == "no usable GPU: out of memory");
  }
  failing.join();
}

// The move-to-front step stays on the GPU while the GPUs keep up (a batch or less waits
// for them) or the CPUs fall behind (more than two batches of sorted blocks wait).
TEST_CASE("The GPU moves to front unless it is the limit and the CPUs keep up", "[queue]") {
  WorkQueue q(20, 1);
  q.reserve_for_gpus(2);
  const int id = q.add_gpu_station(2);
  for (uint64_t i = 0; i < 2; i++) REQUIRE(q.push_raw(raw_job(i)));
  REQUIRE(q.gpu_moves_to_front());
  REQUIRE(q.push_raw(raw_job(2)));
  REQUIRE(!q.gpu_moves_to_front());
  for (uint64_t i = 3; i < 10; i++) REQUIRE(q.push_raw(raw_job(i)));
  for (int k = 0; k < 5; k++) {
    auto job = q.pop_for_cpu();
    REQUIRE(job);
    job->prepared = true;
    q.prepared(std::move(*job));
  }
  std::vector<Job> batch = q.pop_raw_batch(id, 5);
  REQUIRE(batch.size() == 5);
  for (Job& j : batch) j.sorted.emplace();
  q.return_from_gpu(id, std::move(batch), 0);
  REQUIRE(q.gpu_moves_to_front());
  q.abort(std::make_exception_ptr(std::runtime_error("done")));
}

// A GPU result the encoder cannot take (here the text itself in place of its MTF
// positions) stops the run with an internal error naming the block, not bad output.
TEST_CASE("A station names the block whose GPU result it refuses", "[queue]") {
  Job job = raw_job(6);
  const auto text = gpbzip2::corpus::generate("text", 1000, 7);
  std::copy(text.begin(), text.end(), job.raw.buffer.data());
  job.prepared = true;
  job.sorted.emplace();
  job.sorted->moved_to_front = true;
  for (uint8_t c : text) job.sorted->in_use[c] = true;
  gpbzip2::BlockCompressor compressor;
  try {
    compressor.compress(job);
    FAIL("no error");
  } catch (const gpbzip2::Error& e) {
    REQUIRE(e.kind() == gpbzip2::ErrorKind::Internal);
    REQUIRE(std::string(e.what()) ==
            "block 7, sorted on the GPU: move-to-front position out of range");
  }
}
