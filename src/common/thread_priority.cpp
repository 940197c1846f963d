#include "thread_priority.h"

#include <sys/resource.h>
#include <unistd.h>

namespace gpbzip2 {

void run_nicer() {
#ifdef __linux__
  const int tid = int(gettid());
  setpriority(PRIO_PROCESS, id_t(tid), getpriority(PRIO_PROCESS, id_t(tid)) + 5);
#endif
}

}  // namespace gpbzip2
