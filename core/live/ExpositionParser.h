#pragma once
// The Prometheus text exposition format (0.0.4), as SGLang's and vLLM's /metrics answer it. Lenient
// by line: a bad line becomes a problem (line, field, what was expected) and the rest still parses,
// so one odd metric cannot blind the console to a worker's KV occupancy. The caller decides whether
// problems make the worker "degraded". Bounded: body size, line length, samples and problems are
// capped, because the body comes from the network.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

enum class MetricType : std::uint8_t { Untyped, Counter, Gauge, Histogram, Summary };
const char* toString(MetricType);

struct MetricLabel {
  std::string name;
  std::string value;
};

struct MetricSample {
  std::string name;  // the full sample name, e.g. "sglang:ttft_seconds_bucket"
  std::vector<MetricLabel> labels;
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;
  long line = 0;
  // The label's value, or nullptr when the sample has no such label.
  const std::string* label(std::string_view name) const;
};

struct MetricFamily {
  std::string name;  // without _bucket/_sum/_count for histograms and summaries
  MetricType type = MetricType::Untyped;
  std::string help;
  std::vector<MetricSample> samples;
};

struct ExpositionProblem {
  long line = 0;                // 1-based; 0 for the body as a whole
  std::string field;            // the metric or label concerned, "" when none
  std::string what;             // what was expected and what was found
  std::string message() const;  // "line 12: field 'x': expected ..."
};

struct ExpositionLimits {
  std::size_t max_body_bytes = 8u << 20;  // SGLang's /metrics is ~10 KB per worker
  std::size_t max_line_bytes = 64u << 10;
  std::size_t max_samples = 200'000;
  std::size_t max_labels = 64;     // per sample
  std::size_t max_problems = 100;  // the rest are only counted
};

struct Exposition {
  std::vector<MetricFamily> families;
  std::vector<ExpositionProblem> problems;
  std::size_t problems_dropped = 0;  // beyond ExpositionLimits::max_problems
  bool truncated = false;            // the body ends mid-line or mid-histogram
  long lines = 0;
  std::size_t samples = 0;

  bool ok() const { return problems.empty() && problems_dropped == 0 && !truncated; }
  const MetricFamily* find(std::string_view name) const;
};

class ExpositionParser {
 public:
  ExpositionParser() = default;
  explicit ExpositionParser(ExpositionLimits limits) : limits_(limits) {}

  // Never throws on any input.
  Exposition parse(std::string_view body) const;

 private:
  ExpositionLimits limits_;
};

}  // namespace kvscope
