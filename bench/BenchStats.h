#pragma once
// A benchmark's timings (bench_console, bench_knob_drag): percentiles, max and mean on one line.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kvscope::bench {

struct Stats {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  double pct(double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(
        std::clamp(p / 100.0 * static_cast<double>(v.size()) - 1.0 + 0.999999, 0.0, static_cast<double>(v.size() - 1)));
    return v[i];
  }
  double max() { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
  double mean() {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  }
  std::string line(const char* unit = "ms") {
    char buf[256];
    std::snprintf(buf, sizeof buf, "p50 %.2f  p90 %.2f  p99 %.2f  max %.2f  mean %.2f %s  (n=%zu)", pct(50), pct(90),
                  pct(99), max(), mean(), unit, v.size());
    return buf;
  }
};

}  // namespace kvscope::bench
