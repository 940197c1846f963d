// A block's rotation sort shared between threads (bwt_shared_sort.h) against libdivsufsort's
// route, and the work queue's offers of such tasks to the stations left without work.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compress/bwt.h"
#include "compress/bwt_shared_sort.h"
#include "compress/work_queue.h"
#include "generators.h"

using gpbzip2::corpus::generate;

namespace {

// Runs the tasks on the caller and `extra` threads started for each call.
gpbzip2::Team threads_team(int extra) {
  const auto run = [extra](size_t tasks, const std::function<void(size_t)>& body) {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < tasks;) body(i);
    };
    std::vector<std::thread> helpers;
    for (int i = 0; i < extra; i++) helpers.emplace_back(work);
    work();
    for (auto& h : helpers) h.join();
  };
  return {run, extra + 1};
}

// The shared sort's order of t's rotations as the last column and origPtr, or nothing
// where it gave up; the same through bwt_forward whatever it did.
bool shared_matches_alone(const std::vector<uint8_t>& t, const gpbzip2::Team& team) {
  const int32_t n = int32_t(t.size());
  gpbzip2::BwtWorkspace alone_ws, team_ws;
  const gpbzip2::BwtView alone = gpbzip2::bwt_forward(t.data(), n, alone_ws);
  const gpbzip2::BwtView shared = gpbzip2::bwt_forward(t.data(), n, team_ws, &team);
  REQUIRE(shared.orig_ptr == alone.orig_ptr);
  REQUIRE(std::memcmp(shared.last, alone.last, size_t(n)) == 0);
  // Directly, on the rotations of t (the shared sort needs no least rotation).
  std::vector<int32_t> sa(t.size());
  if (!gpbzip2::sort_rotations_shared(t.data(), n, sa.data(), team)) return false;
  std::vector<uint8_t> last(t.size());
  uint32_t orig_ptr = 0;
  for (int32_t r = 0; r < n; r++) {
    const int32_t x = sa[size_t(r)];
    last[size_t(r)] = t[size_t((x + n - 1) % n)];
    if (x == 0) orig_ptr = uint32_t(r);
  }
  REQUIRE(std::memcmp(last.data(), alone.last, size_t(n)) == 0);
  REQUIRE(orig_ptr == alone.orig_ptr);
  return true;
}

}  // namespace

TEST_CASE("A shared rotation sort orders as the sort alone", "[bwt][shared]") {
  const auto team = threads_team(3);
  for (const char* kind : {"text", "binary", "random"}) {
    for (size_t n : {5000u, 70001u, 899981u}) {
      INFO(kind << " " << n);
      REQUIRE(shared_matches_alone(generate(kind, n, 7), team));
    }
  }
  // Bytes from 0xF8 up (the packed keys' top bits), and a text whose end repeats its
  // start (rotations that part only after the wrap).
  std::mt19937 rng(11);
  std::vector<uint8_t> high(300000);
  for (auto& b : high) b = uint8_t(0xF8 + rng() % 8);
  REQUIRE(shared_matches_alone(high, team));
  auto wrap = generate("text", 200000, 3);
  std::copy(wrap.begin(), wrap.begin() + 5000, wrap.end() - 5000);
  wrap.back() ^= 1;
  REQUIRE(shared_matches_alone(wrap, team));
  // One thread alone, with tasks of every kind.
  REQUIRE(shared_matches_alone(generate("text", 120000, 9), threads_team(0)));
}

TEST_CASE("A shared rotation sort gives up on long repeats, and the block is still sorted",
          "[bwt][shared]") {
  const auto team = threads_team(2);
  for (const char* kind : {"fibonacci", "thue-morse", "edits", "sparse"}) {
    INFO(kind);
    REQUIRE_FALSE(shared_matches_alone(generate(kind, 300000, 1), team));
  }
  // Runs, whose bytes the repeat estimate samples everywhere: either way the same order.
  shared_matches_alone(generate("runs", 300000, 2), team);
  // A short period over 40% of a text block: one task would hold its rotations.
  auto stretch = generate("text", 300000, 4);
  for (size_t i = 100000; i < 220000; i++) stretch[i] = "ab"[i % 2];
  REQUIRE_FALSE(shared_matches_alone(stretch, team));
}

TEST_CASE("A shared rotation sort takes on more repeats where more threads share it",
          "[bwt][shared]") {
  // A text block with copies of 400-byte passages, as in a source tar (a hint: the same
  // three threads run the tasks whatever the team says).
  auto with_copies = [](int copies) {
    auto t = generate("text", 300000, 8);
    std::mt19937 rng(3);
    for (int copy = 0; copy < copies; copy++) {
      const size_t from = 1000 * (rng() % 20), to = 400 * (rng() % 749);
      std::copy(t.begin() + long(from), t.begin() + long(from + 400), t.begin() + long(to));
    }
    return t;
  };
  gpbzip2::Team team = threads_team(2);
  // 120 copies: given up for three threads, sorted for four.
  const auto some = with_copies(120);
  REQUIRE_FALSE(shared_matches_alone(some, team));
  team.threads = 4;
  REQUIRE(shared_matches_alone(some, team));
  // 250: given up for four, sorted for eight.
  const auto more = with_copies(250);
  REQUIRE_FALSE(shared_matches_alone(more, team));
  team.threads = 8;
  REQUIRE(shared_matches_alone(more, team));
}

TEST_CASE("A shared rotation sort of small blocks and small alphabets", "[bwt][shared]") {
  const auto team = threads_team(2);
  std::mt19937 rng(5);
  auto random_block = [&](size_t n, unsigned sigma) {
    std::vector<uint8_t> t(n);
    for (auto& b : t) b = uint8_t(0x7C + rng() % sigma);  // across 0x7F / 0x80
    return t;
  };
  // Sizes about the passes' edges (8-byte words, 66 bytes ordered, 256 split by a byte),
  // whose rotations wrap within the first words.
  for (size_t n : {2u, 3u, 7u, 8u, 9u, 65u, 66u, 67u, 255u, 256u, 257u, 4097u}) {
    auto t = random_block(n, 2);
    t[0] = 0x7B;  // not periodic
    INFO(n);
    REQUIRE(shared_matches_alone(t, team));
  }
  // Alphabets of 4-16 bytes with a copied stretch (under the repeat estimate's bound).
  for (int round = 0; round < 20; round++) {
    auto t = random_block(5000 + rng() % 60000, 4 + rng() % 13);
    const size_t copy = rng() % (t.size() / 20);
    std::copy(t.begin(), t.begin() + long(copy), t.end() - long(copy));
    t[rng() % t.size()] ^= 1;
    INFO("round " << round << ", " << t.size() << " bytes");
    REQUIRE(shared_matches_alone(t, team));
  }
}

TEST_CASE("Stations left without work run the tasks a sorting station offers", "[queue][shared]") {
  gpbzip2::WorkQueue q(4, 4);
  gpbzip2::Job job;
  job.raw.index = 0;
  job.raw.input_bytes = job.raw.rle_bytes = gpbzip2::WorkQueue::kShareMinBytes;
  REQUIRE(q.push_raw(std::move(job)));
  q.close_input(1);
  for (int i = 0; i < 4; i++) q.cpu_station_added();
  auto mine = q.pop_for_cpu();
  REQUIRE(mine);
  REQUIRE(mine->share_threads == 4);  // the last block, three stations idle
  std::vector<std::thread> idle;
  std::atomic<int> left{0}, given_jobs{0};
  for (int i = 0; i < 3; i++)
    idle.emplace_back([&] {
      if (q.pop_for_cpu()) given_jobs++;  // none: they help, then leave
      left++;
    });

  // Task 0 waits (up to 10 s) until another thread has run a task: a helper joined.
  std::mutex mu;
  std::condition_variable cv;
  std::multiset<std::thread::id> ran;
  std::vector<int> runs(64, 0);
  const std::thread::id owner = std::this_thread::get_id();
  q.run_together(runs.size(), [&](size_t i) {
    std::unique_lock lk(mu);
    runs[i]++;
    ran.insert(std::this_thread::get_id());
    cv.notify_all();
    if (i == 0)
      cv.wait_for(lk, std::chrono::seconds(10), [&] { return ran.size() > ran.count(owner); });
  });
  for (int r : runs) REQUIRE(r == 1);
  REQUIRE(ran.size() > ran.count(owner));

  // A failing task fails the call, after every helper is out of it.
  std::atomic<int> running{0};
  REQUIRE_THROWS_AS(q.run_together(32,
                                   [&](size_t i) {
                                     running++;
                                     std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                     running--;
                                     if (i == 5) throw std::runtime_error("task 5");
                                   }),
                    std::runtime_error);
  REQUIRE(running == 0);

  REQUIRE(left == 0);  // they stay while a station holds a job
  gpbzip2::CodedBlock done;
  done.index = 0;
  q.deliver(std::move(done));
  for (auto& t : idle) t.join();
  REQUIRE(left == 3);
  REQUIRE(given_jobs == 0);
}

TEST_CASE("The blocks of a small file are shared from the first, before the input closes",
          "[queue][shared]") {
  gpbzip2::WorkQueue q(8, 8);
  for (int i = 0; i < 8; i++) q.cpu_station_added();
  // A block pushed with `coming` behind it, taken at once: the threads it is shared by.
  auto shared_by = [&](uint64_t index, uint64_t coming,
                       uint64_t bytes = gpbzip2::WorkQueue::kShareMinBytes) {
    gpbzip2::Job job;
    job.raw.index = index;
    job.raw.input_bytes = job.raw.rle_bytes = bytes;
    REQUIRE(q.push_raw(std::move(job), coming));
    auto taken = q.pop_for_cpu();
    REQUIRE(taken);
    return taken->share_threads;
  };
  auto deliver = [&](uint64_t index) {
    gpbzip2::CodedBlock done;
    done.index = index;
    q.deliver(std::move(done));
  };
  // Two blocks in all: four stations a block.
  REQUIRE(shared_by(0, 1) == 4);
  REQUIRE(shared_by(1, 0) == 4);
  deliver(0);
  deliver(1);
  // Two more known to come, then many: the second has too many behind it to be shared.
  REQUIRE(shared_by(2, 1) == 4);
  REQUIRE(shared_by(3, 10) == 0);
  deliver(2);
  deliver(3);
  // The last, but with too little to sort.
  REQUIRE(shared_by(4, 0, gpbzip2::WorkQueue::kShareMinBytes - 1) == 0);
  deliver(4);
  q.close_input(5);
  REQUIRE_FALSE(q.pop_for_cpu());
}

TEST_CASE("Stations beyond the cores do not count for sharing a sort", "[queue][shared]") {
  gpbzip2::WorkQueue q(8, 8, 3);  // eight stations on three cores
  for (int i = 0; i < 8; i++) q.cpu_station_added();
  gpbzip2::Job job;
  job.raw.input_bytes = job.raw.rle_bytes = gpbzip2::WorkQueue::kShareMinBytes;
  REQUIRE(q.push_raw(std::move(job), 0));
  auto taken = q.pop_for_cpu();
  REQUIRE(taken);
  REQUIRE(taken->share_threads == 0);
  gpbzip2::CodedBlock done;
  q.deliver(std::move(done));
  q.close_input(1);
  REQUIRE_FALSE(q.pop_for_cpu());
}
