// compress_stream starts only the threads an input can use: a one-block input (a small
// file) is compressed by the calling thread unless its sort is worth sharing, and from a
// pipe no more stations start than there are blocks. Threads are counted in
// /proc/self/status from the progress callback, which runs after each block is written.
#include <catch2/catch.hpp>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "common/cpu_count.h"
#include "common/gpu.h"
#include "common/format.h"
#include "generators.h"
#include "gpbzip2.h"
#include "test_helpers.h"

namespace {

int process_threads() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  FAIL("no Threads: line in /proc/self/status");
  return -1;
}

struct Watched {
  int most_extra_threads = 0;  // beyond those running before the call
  bool called_back_on_caller = true;
};

Watched compress_watching(const std::vector<uint8_t>& in, int level, int threads) {
  Watched w;
  const auto caller = std::this_thread::get_id();
  const int before = process_threads();
  auto out = testing::gp_compress(in, level, threads, [&](uint64_t, uint64_t) {
    w.most_extra_threads = std::max(w.most_extra_threads, process_threads() - before);
    if (std::this_thread::get_id() != caller) w.called_back_on_caller = false;
  });
  REQUIRE(out == testing::bzip2_reference(in, level));
  return w;
}

// A pipe that gives its bytes from `gate` on (its end included) only once opened, or once
// `wait` has passed (noted).
class GatedPipe final : public gpbzip2::Source {
 public:
  GatedPipe(const std::vector<uint8_t>& data, size_t gate, std::chrono::milliseconds wait)
      : data_(data), gate_(gate), wait_(wait) {}
  size_t read(uint8_t* buf, size_t n) override {
    if (pos_ >= gate_) {
      std::unique_lock lk(mu_);
      if (!cv_.wait_for(lk, wait_, [&] { return opened_; })) waited_out = true;
    }
    n = std::min(n, (pos_ < gate_ ? std::min(gate_, data_.size()) : data_.size()) - pos_);
    std::copy_n(data_.data() + pos_, n, buf);
    pos_ += n;
    if (pos_ == data_.size()) all_read = true;
    return n;
  }
  void open() {
    std::lock_guard lk(mu_);
    opened_ = true;
    cv_.notify_all();
  }
  std::atomic<bool> all_read = false;
  bool waited_out = false;

 private:
  const std::vector<uint8_t>& data_;
  size_t gate_, pos_ = 0;
  std::chrono::milliseconds wait_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool opened_ = false;
};

struct Gated {
  std::vector<uint8_t> out;
  bool first_after_all = false;  // the whole input was read when the first block was written
  bool waited_out = false;
};

// Compressed from a GatedPipe at -level with 16 threads; the first block written opens it.
Gated compress_gated(const std::vector<uint8_t>& in, int level, size_t gate,
                     std::chrono::milliseconds wait) {
  GatedPipe pipe(in, gate, wait);
  gpbzip2::VectorSink sink;
  gpbzip2::CompressOptions o;
  o.level = level;
  o.threads = 16;
  o.gpu = gpbzip2::GpuMode::Off;
  Gated g;
  bool called = false;
  o.progress = [&](uint64_t, uint64_t) {
    if (!called) g.first_after_all = pipe.all_read;
    called = true;
    pipe.open();
  };
  gpbzip2::compress_stream(pipe, sink, o);
  g.out = std::move(sink.data);
  g.waited_out = pipe.waited_out;
  return g;
}

}  // namespace

TEST_CASE("a one-block input is compressed by the calling thread alone", "[threads]") {
  const size_t limit = size_t(gpbzip2::format::block_limit(1));
  for (size_t n : {size_t(1), size_t(29), size_t(5000), limit}) {
    INFO(n << " bytes");
    Watched w = compress_watching(gpbzip2::corpus::generate("random", n, 3), 1, 16);
    REQUIRE(w.called_back_on_caller);
    REQUIRE(w.most_extra_threads == 0);
  }
}

TEST_CASE("one large block is compressed by stations that share its sort, given the cores",
          "[threads]") {
  // Four stations or more on as many cores (more stations than cores add no helpers).
  const auto block = gpbzip2::corpus::generate("text", 800000, 3);
  const bool cores = gpbzip2::default_thread_count() >= 4;
  REQUIRE(compress_watching(block, 9, 16).called_back_on_caller == !cores);
  REQUIRE(compress_watching(block, 9, 3).called_back_on_caller);
}

TEST_CASE("a small input from a pipe is read whole before its first block is taken, given cores",
          "[threads]") {
  // Sixteen stations on 8 cores or more share the sorts of an input of two blocks from the
  // first (a quarter of the stations): the reader waits for the second block (the pipe
  // holds it back 300 ms) before handing out either, where it would otherwise have
  // written the first by then.
  const auto in = gpbzip2::corpus::generate("text", 1'500'000, 5);
  const Gated g = compress_gated(in, 9, 1'000'000, std::chrono::milliseconds(300));
  REQUIRE(g.out == testing::bzip2_reference(in, 9));
  if (gpbzip2::default_thread_count() >= 8) REQUIRE(g.first_after_all);
}

TEST_CASE("a large input from a pipe is not held back to be read whole", "[threads]") {
  // Twelve blocks at -3, the pipe closed past the sixth until the first is written: the
  // reader reads no more than a few blocks ahead of the stations, whatever the cores.
  const size_t limit = size_t(gpbzip2::format::block_limit(3));
  const auto in = gpbzip2::corpus::generate("text", 12 * limit, 6);
  const Gated g = compress_gated(in, 3, 6 * limit, std::chrono::seconds(10));
  REQUIRE(g.out == testing::bzip2_reference(in, 3));
  REQUIRE_FALSE(g.waited_out);
}

TEST_CASE("no more compute threads start than there are blocks", "[threads]") {
  // Three blocks at -1: a writer and at most three stations, not sixteen. (How many are
  // alive at a callback depends on timing: stations may not have started or may be done;
  // the writer, which makes the callback, always is.)
  const size_t limit = size_t(gpbzip2::format::block_limit(1));
  Watched w = compress_watching(gpbzip2::corpus::generate("random", 2 * limit + 1000, 4), 1, 16);
  REQUIRE_FALSE(w.called_back_on_caller);
  REQUIRE(w.most_extra_threads >= 1);
  REQUIRE(w.most_extra_threads <= 4);
}

TEST_CASE("the default thread count is the cores the process may run on", "[threads]") {
  // Affinity is the calling thread's; narrowed to one core, then given back.
  cpu_set_t before, one;
  REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
  const int quota = gpbzip2::cgroup_cpu_limit();
  REQUIRE(gpbzip2::default_thread_count() ==
          (quota > 0 ? std::min(CPU_COUNT(&before), quota) : CPU_COUNT(&before)));
  int first = 0;
  while (!CPU_ISSET(first, &before)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  const int narrowed = gpbzip2::default_thread_count();
  REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
  REQUIRE(narrowed == 1);
}

TEST_CASE("a cgroup v2 CPU quota: the least over the cgroup and its ancestors", "[threads]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpbzip2-cgroup-" + std::to_string(getpid()));
  fs::create_directories(dir / "root/a/b");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  const std::string cgroup = (dir / "cgroup").string(), mountinfo = (dir / "mountinfo").string();
  write(dir / "cgroup", "12:cpu,cpuacct:/a/b\n0::/a/b\n");
  write(dir / "mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n"
                           "30 22 0:26 / " + (dir / "root").string() +
                           " rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 0);  // no cpu.max anywhere
  write(dir / "root/a/b/cpu.max", "max 100000\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 0);
  write(dir / "root/a/cpu.max", "250000 100000\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 3);  // 2.5 CPUs: three threads
  write(dir / "root/a/b/cpu.max", "100000 100000\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 1);
  write(dir / "root/cpu.max", "50000 100000\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 1);
  // Without a cgroup2 mount, its files are not looked for.
  write(dir / "mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 0);
  fs::remove_all(dir);
}

TEST_CASE("a cgroup v1 CPU quota, where the cpu hierarchy is mounted", "[threads]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpbzip2-cgroup1-" + std::to_string(getpid()));
  // The host's view: the hierarchy's root mounted at "cpu dir" (a space, escaped in
  // mountinfo); a container's: its own cgroup mounted as the root.
  const fs::path host = dir / "cpu dir", own = dir / "own";
  fs::create_directories(host / "docker/abc");
  fs::create_directories(own);
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  const std::string cgroup = (dir / "cgroup").string(), mountinfo = (dir / "mountinfo").string();
  write(dir / "cgroup", "11:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
  const std::string host_point = (dir / "cpu\\040dir").string();
  write(dir / "mountinfo", "40 30 0:35 / " + host_point +
                           " rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
                           "41 30 0:36 / /nowhere rw - cgroup cgroup rw,memory\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 0);  // no quota files
  write(host / "docker/abc/cpu.cfs_quota_us", "-1\n");
  write(host / "docker/abc/cpu.cfs_period_us", "100000\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 0);  // -1: no quota
  write(host / "docker/abc/cpu.cfs_quota_us", "400000\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 4);
  write(host / "docker/cpu.cfs_quota_us", "150000\n");
  write(host / "docker/cpu.cfs_period_us", "100000\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 2);
  write(own / "cpu.cfs_quota_us", "300000\n");
  write(own / "cpu.cfs_period_us", "100000\n");
  write(dir / "mountinfo", "40 30 0:35 /docker/abc " + own.string() +
                           " rw - cgroup cgroup rw,cpuacct,cpu\n");
  CHECK(gpbzip2::cgroup_cpu_limit(cgroup, mountinfo) == 3);
  fs::remove_all(dir);
}

TEST_CASE("the GPUs shown to the driver: the first of those it would show", "[threads]") {
  using gpbzip2::first_gpus;
  CHECK(first_gpus(nullptr, 1) == "0");
  CHECK(first_gpus(nullptr, 3) == "0,1,2");
  CHECK(first_gpus("2,3,5", 1) == "2");
  CHECK(first_gpus("2,3,5", 2) == "2,3");
  CHECK(first_gpus("2,3,5", 3) == "2,3,5");
  CHECK(first_gpus("2,3,5", 8) == "2,3,5");
  CHECK(first_gpus("GPU-8f2a,MIG-1c3d", 1) == "GPU-8f2a");
  CHECK(first_gpus("", 1).empty());  // none visible stays none
}

TEST_CASE("compression opens one GPU up to 2.5 GB to sort, a further one each 2.5 GB more",
          "[threads]") {
  CHECK(gpbzip2::most_compress_gpus(0) == 1);  // a pipe
  CHECK(gpbzip2::most_compress_gpus(1'900'000'000) == 1);
  // Runs of four bytes grow by a quarter in bzip2's first run-length coding.
  CHECK(gpbzip2::most_compress_gpus(2'100'000'000) == 2);
  CHECK(gpbzip2::most_compress_gpus(4'100'000'000) == 3);
}

TEST_CASE("indices name the first GPUs only on a host of one model without MIG instances",
          "[threads]") {
  namespace fs = std::filesystem;
  const fs::path proc = fs::temp_directory_path() / ("gpbzip2-nvidia-" + std::to_string(getpid()));
  auto gpu = [&](const std::string& bus, const std::string& model) {
    fs::create_directories(proc / "gpus" / bus);
    std::ofstream(proc / "gpus" / bus / "information")
        << "Model: \t\t " << model << "\nIRQ:   \t\t 17\nGPU UUID: \t GPU-" << bus << "\n";
  };
  using gpbzip2::indices_name_first_gpus;
  CHECK_FALSE(indices_name_first_gpus(proc.string(), 1));  // no module: leave it be
  gpu("0000:18:00.0", "NVIDIA H200");
  CHECK_FALSE(indices_name_first_gpus(proc.string(), 1));  // one GPU: nothing to leave out
  gpu("0000:2a:00.0", "NVIDIA H200");
  CHECK(indices_name_first_gpus(proc.string(), 1));
  CHECK_FALSE(indices_name_first_gpus(proc.string(), 2));
  fs::create_directories(proc / "capabilities/gpu1/mig");
  std::ofstream(proc / "capabilities/gpu1/mig/monitor") << "DeviceFileMinor: 2\n";
  CHECK(indices_name_first_gpus(proc.string(), 1));  // MIG capable, not split
  fs::create_directories(proc / "capabilities/gpu1/mig/gi3/ci0");
  CHECK_FALSE(indices_name_first_gpus(proc.string(), 1));
  fs::remove_all(proc / "capabilities");
  gpu("0000:3b:00.0", "NVIDIA T400");  // another model: the driver's order may differ
  CHECK_FALSE(indices_name_first_gpus(proc.string(), 1));
  fs::remove_all(proc);
}
