#include "cpu_count.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <thread>

#include "gpbzip2.h"

namespace gpbzip2 {

namespace {

// A small file's text (read(2), not iostreams, whose first use costs 0.05 ms of start-up),
// empty where it cannot be read.
std::string read_small_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < (size_t(1) << 20);)
    text.append(buf, size_t(n));
  ::close(fd);
  return text;
}

}  // namespace

int cgroup_cpu_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
  const std::string cgroups = read_small_file(proc_self_cgroup);
  std::string path;  // in the unified (v2) hierarchy: the line "0::PATH"
  for (size_t at = 0; at < cgroups.size();) {
    const size_t end = std::min(cgroups.find('\n', at), cgroups.size());
    if (cgroups.compare(at, 3, "0::") == 0) path = cgroups.substr(at + 3, end - at - 3);
    at = end + 1;
  }
  if (path.empty() || path[0] != '/') return 0;
  int least = 0;
  for (std::string dir = path;;) {
    // "max PERIOD" or "QUOTA PERIOD", in microseconds.
    const std::string max = read_small_file(cgroup_root + (dir == "/" ? "" : dir) + "/cpu.max");
    long long quota = 0, period = 0;
    if (std::sscanf(max.c_str(), "%lld %lld", &quota, &period) == 2 && quota > 0 && period > 0) {
      const long long cpus = std::min<long long>((quota + period - 1) / period, 1 << 20);
      if (least == 0 || cpus < least) least = int(cpus);
    }
    if (dir == "/") break;
    const size_t slash = dir.find_last_of('/');
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
  return least;
}

// One per CPU the process may use: its CPU affinity (taskset, a cpuset such as a batch
// scheduler's or a container's --cpuset-cpus), and no more than a cgroup CPU quota allows
// (a container's --cpus): a thread for every core of a large host would each take their
// blocks' memory for a share of a few CPUs.
int default_thread_count() {
  cpu_set_t allowed;
  int n = sched_getaffinity(0, sizeof allowed, &allowed) == 0
              ? CPU_COUNT(&allowed)
              : int(std::thread::hardware_concurrency());
  if (const int quota = cgroup_cpu_limit(); quota > 0) n = std::min(n, quota);
  return std::max(1, n);
}

namespace {

// How many threads of per_thread bytes besides their stacks the address-space limit holds
// beside `reserve` more bytes: at least 1, INT_MAX where no limit is set.
int address_space_thread_limit(uint64_t per_thread, uint64_t reserve) {
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return INT_MAX;
  // Mapped now: the first field of /proc/self/statm, in pages.
  unsigned long long pages = 0;
  if (std::sscanf(read_small_file("/proc/self/statm").c_str(), "%llu", &pages) != 1)
    return INT_MAX;
  const uint64_t mapped = pages * uint64_t(sysconf(_SC_PAGESIZE));
  // A new thread's stack: the default its attributes give (RLIMIT_STACK's, unless the
  // program set another), and a guard page.
  size_t stack = 8 << 20;
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &stack);
    pthread_attr_destroy(&attr);
  }
  const uint64_t limit = as.rlim_cur, need = mapped + reserve;
  if (limit <= need) return 1;
  return int(std::clamp<uint64_t>((limit - need) / (per_thread + stack + 4096), 1, INT_MAX));
}

}  // namespace

int station_count(int asked, uint64_t per_thread, uint64_t reserve) {
  const int wanted = asked > 0 ? asked : default_thread_count();
  return std::min(wanted, address_space_thread_limit(per_thread, reserve));
}

}  // namespace gpbzip2
