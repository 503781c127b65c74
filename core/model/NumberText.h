#pragma once
// The one vocabulary for numbers as text, in messages, reports, tables and progress lines: a file
// that needs a number shown says which of these it means instead of keeping a private snprintf.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kvscope {

// A double as text that reads back as the same value: the familiar six-digit form ("100000",
// "1e+08", "0.5") when it is exact, else the shortest exact one ("10000.000001"), never a rounding
// that makes an out-of-range message contradict itself ("10000 is out of range [0, 10000]").
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

// Six significant digits ("%g": "0.25", "1e+06"): a value in a report cell or a label, where
// reading it back exactly does not matter.
inline std::string compactText(double v) { return formatNumber("%g", v); }

// A duration with its unit, "1.25 s" (`decimals` digits after the point).
inline std::string secondsText(double s, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f s", decimals, s);
  return buf;
}

// A p-value in prose ("p=0.25", "p=3.1e-05"): three significant digits, exponent form below 0.001.
inline std::string pValueText(double p) { return formatNumber(p < 0.001 ? "%.1e" : "%.3g", p); }

// A p-value in a table column: three decimals so the column aligns ("0.500"), exponent form below
// 0.001, "-" when there is none (NaN).
inline std::string pValueCell(double p) {
  if (std::isnan(p)) return "-";
  return formatNumber(p < 0.001 ? "%.1e" : "%.3f", p);
}

// Elapsed or remaining time as a clock, "1:05" or "1:02:03"; "--:--" when unknown (NaN, negative).
inline std::string clockText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long t = std::lround(seconds);
  char buf[48];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

}  // namespace kvscope
