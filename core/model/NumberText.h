#pragma once
// A double as text that reads back as the same value: the familiar six-digit form ("100000",
// "1e+08", "0.5") when it is exact, else the shortest exact one ("10000.000001"), never a rounding
// that makes an out-of-range message contradict itself ("10000 is out of range [0, 10000]").
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kvscope {

inline std::string shortestText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  if (std::strtod(buf, nullptr) == v) return buf;
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string(buf);
}

// One number through a printf format ("%.1f%%", "%+.3f"): the reports' and tables' one helper.
inline std::string formatNumber(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace kvscope
