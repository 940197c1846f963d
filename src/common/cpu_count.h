// How many threads to run: the CPUs the process may use (the default thread count), and
// the threads an address-space limit can hold.
#pragma once
#include <cstdint>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace gpbzip2 {

// The CPUs that the CPU quotas of the process's cgroup and of its ancestors allow (quota
// over period, rounded up; the least of them), or 0 where none is set: cgroup v2's
// cpu.max, and v1's cpu.cfs_quota_us in the hierarchy with the cpu controller (older
// hosts' containers), each found where mountinfo says it is mounted. The paths are
// parameters so that a test can give files of its own.
int cgroup_cpu_limit(const std::string& proc_self_cgroup = "/proc/self/cgroup",
                     const std::string& mountinfo = "/proc/self/mountinfo");

// The stations to run: `asked` (-n), or default_thread_count() where 0, but no more than
// fit under the process's address-space limit (ulimit -v, RLIMIT_AS), each mapping
// `per_thread` bytes besides its stack, beside what the process maps already and `reserve`
// bytes more; at least 1. bzip2 runs in a few MB, so a limit that holds one station must
// not fail a run for want of a sixteenth.
int station_count(int asked, uint64_t per_thread, uint64_t reserve);

// Whether the process runs under an address-space limit (ulimit -v).
bool address_space_limited();

// Starts a station thread running `f` into `threads`. False where the system gives no
// more threads (an address-space limit holds their stacks): those started go on alone.
// With none started, memory has run out (std::bad_alloc, as bzip2 reports it).
template <class F>
bool start_station_thread(std::vector<std::thread>& threads, F&& f) {
  try {
    threads.emplace_back(std::forward<F>(f));
    return true;
  } catch (const std::system_error&) {
    if (threads.empty()) throw std::bad_alloc();
    return false;
  }
}

}  // namespace gpbzip2
