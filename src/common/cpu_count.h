// How many CPUs the process may use, for the default thread count.
#pragma once
#include <string>

namespace gpbzip2 {

// The CPUs that the cgroup v2 CPU quotas of the process's cgroup and of its ancestors
// allow (quota over period, rounded up; the least of them), or 0 where none is set. The
// paths are parameters so that a test can give a tree of its own.
int cgroup_cpu_limit(const std::string& proc_self_cgroup = "/proc/self/cgroup",
                     const std::string& cgroup_root = "/sys/fs/cgroup");

}  // namespace gpbzip2
