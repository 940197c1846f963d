#include "cpu_count.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

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

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  for (size_t at = 0;;) {
    const size_t end = std::min(text.find(by, at), text.size());
    out.push_back(text.substr(at, end - at));
    if (end == text.size()) return out;
    at = end + 1;
  }
}

bool has_item(const std::string& list, const std::string& item) {
  for (const std::string& s : split(list, ','))
    if (s == item) return true;
  return false;
}

// mountinfo writes a space, tab, newline or backslash in a path as \ and three octal digits.
std::string unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); i++) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      out += char((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// Where a cgroup hierarchy is mounted: the cgroup the mount shows (its root in the
// hierarchy; a container sees its own cgroup there) and the mount point.
struct CgroupMount {
  std::string root, point;
};

// The least of the quotas seen so far and `cpus` (0: none set).
int least_quota_of(int least, long long cpus) {
  return cpus > 0 && (least == 0 || cpus < least) ? int(cpus) : least;
}

// The quota of one cgroup directory, in CPUs rounded up; 0 where none is set.
// v2: cpu.max holds "QUOTA PERIOD" or "max PERIOD"; v1: cpu.cfs_quota_us (-1: none) and
// cpu.cfs_period_us, in microseconds.
long long quota_cpus(const std::string& dir, bool v2) {
  long long quota = 0, period = 0;
  if (v2) {
    if (std::sscanf(read_small_file(dir + "/cpu.max").c_str(), "%lld %lld", &quota, &period) != 2)
      return 0;
  } else if (std::sscanf(read_small_file(dir + "/cpu.cfs_quota_us").c_str(), "%lld", &quota) != 1 ||
             std::sscanf(read_small_file(dir + "/cpu.cfs_period_us").c_str(), "%lld", &period) != 1) {
    return 0;
  }
  if (quota <= 0 || period <= 0) return 0;
  return std::min<long long>((quota + period - 1) / period, 1 << 20);
}

// The least quota over the cgroup `path` of the hierarchy mounted at `m` and its
// ancestors that the mount shows.
int least_quota(const CgroupMount& m, const std::string& path, bool v2) {
  // The cgroup's place under the mount point: its path less the mount's root. A path
  // outside the root (a cgroup namespace shows "/") is the mount point itself.
  std::string rel;
  if (m.root == "/")
    rel = path == "/" ? "" : path;
  else if (path.compare(0, m.root.size(), m.root) == 0 &&
           (path.size() == m.root.size() || path[m.root.size()] == '/'))
    rel = path.substr(m.root.size());
  int least = 0;
  for (;;) {
    least = least_quota_of(least, quota_cpus(m.point + rel, v2));
    if (rel.empty()) return least;
    rel.resize(rel.find_last_of('/'));
  }
}

}  // namespace

int cgroup_cpu_limit(const std::string& proc_self_cgroup, const std::string& mountinfo) {
  std::optional<CgroupMount> v2_mount, v1_mount;
  // "ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS"
  for (const std::string& line : split(read_small_file(mountinfo), '\n')) {
    const std::vector<std::string> f = split(line, ' ');
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") dash++;
    if (dash + 3 >= f.size()) continue;
    const CgroupMount m{unescape(f[3]), unescape(f[4])};
    if (f[dash + 1] == "cgroup2" && !v2_mount) v2_mount = m;
    if (f[dash + 1] == "cgroup" && has_item(f[dash + 3], "cpu") && !v1_mount) v1_mount = m;
  }
  // "0::PATH" for the unified (v2) hierarchy, "ID:CONTROLLERS:PATH" for v1 ones.
  int least = 0;
  for (const std::string& line : split(read_small_file(proc_self_cgroup), '\n')) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (path.empty() || path[0] != '/') continue;
    if (line.compare(0, a, "0") == 0 && controllers.empty() && v2_mount)
      least = least_quota_of(least, least_quota(*v2_mount, path, true));
    else if (has_item(controllers, "cpu") && v1_mount)
      least = least_quota_of(least, least_quota(*v1_mount, path, false));
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

// The address-space limit in bytes (ulimit -v), RLIM_INFINITY where none is set.
rlim_t address_space_limit() {
  rlimit as{};
  return getrlimit(RLIMIT_AS, &as) == 0 ? as.rlim_cur : RLIM_INFINITY;
}

// How many threads of per_thread bytes besides their stacks the address-space limit holds
// beside `reserve` more bytes: at least 1, INT_MAX where no limit is set.
int address_space_thread_limit(uint64_t per_thread, uint64_t reserve) {
  const rlim_t as = address_space_limit();
  if (as == RLIM_INFINITY) return INT_MAX;
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
  const uint64_t limit = as, need = mapped + reserve;
  if (limit <= need) return 1;
  return int(std::clamp<uint64_t>((limit - need) / (per_thread + stack + 4096), 1, INT_MAX));
}

}  // namespace

bool address_space_limited() { return address_space_limit() != RLIM_INFINITY; }

int station_count(int asked, uint64_t per_thread, uint64_t reserve) {
  const int wanted = asked > 0 ? asked : default_thread_count();
  return std::min(wanted, address_space_thread_limit(per_thread, reserve));
}

}  // namespace gpbzip2
