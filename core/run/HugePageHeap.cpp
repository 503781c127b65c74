#include "core/run/HugePageHeap.h"

#include <cstdlib>
#include <string>
#include <string_view>

#if defined(__linux__) && defined(__GLIBC__)
#include <unistd.h>
#endif

namespace kvscope {

void relaunchWithHugePageHeap(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  constexpr std::string_view kTunable = "glibc.malloc.hugetlb";
  if (const char* off = std::getenv("KVSCOPE_HUGE_PAGES"); off && std::string_view(off) == "0") return;
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::string was = before ? before : "";
  // Also the guard against a loop: the relaunched process finds the tunable set and goes on.
  if (was.find(kTunable) != std::string::npos) return;
  const std::string tunables = was + (was.empty() ? "" : ":") + std::string(kTunable) + "=1";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc, say): run on as started, and leave the environment of the programs
  // this one starts as it was.
  if (before)
    setenv("GLIBC_TUNABLES", was.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

}  // namespace kvscope
