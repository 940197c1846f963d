// For the benchmark drivers: the calling thread's CPU time, not wall time. On a shared
// machine the thread may wait for a core, and that would count against whichever stage
// it happened in.
#pragma once
#include <time.h>

inline double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
