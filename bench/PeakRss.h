#pragma once
// The process's peak resident set so far, and its VmRSS / VmHWM, for the benchmarks that print memory.
#include <sys/resource.h>

#include <fstream>
#include <string>

namespace kvscope::bench {

inline double peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// VmRSS or VmHWM from /proc/self/status, in MB (-1 where it cannot be read).
inline double procStatusMb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size())) / 1024.0;  // kB
  return -1;
}

}  // namespace kvscope::bench
