#include "core/run/BackgroundWork.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kvscope {

void lowerThisThreadsPriority() {
#if defined(__linux__)
  // On Linux a nice value is per thread: PRIO_PROCESS with a thread id sets that thread's alone.
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  (void)::setpriority(PRIO_PROCESS, tid, 10);  // best effort: a refusal leaves it at the run's priority
#endif
}

void giveFreeHeapBack() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

}  // namespace kvscope
