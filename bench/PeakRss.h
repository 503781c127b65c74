#pragma once
// The process's peak resident set so far, for the benchmarks that print memory.
#include <sys/resource.h>

namespace kvscope::bench {

inline double peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace kvscope::bench
