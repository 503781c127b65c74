#pragma once
// What the engines' metrics mappers (SglangMetricsMapper, VllmMetricsMapper) share: values collected
// per rank (an SGLang dp_rank, a vLLM `engine`) and folded into one number per worker, and
// histograms assembled from their _bucket / _sum / _count samples and summed over ranks.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/live/EngineMetrics.h"
#include "core/live/ExpositionParser.h"

namespace kvscope {

enum class Across { Sum, Mean };  // how ranks combine: counts add up, ratios average

// One histogram of one rank, as its samples arrive.
struct HistogramParts {
  std::map<double, double> buckets;  // upper bound -> cumulative count
  std::optional<double> sum, count;
  // `suffix` is "_bucket", "_sum" or "_count"; false for anything else.
  bool add(std::string_view suffix, const MetricSample& sample);
};

// The `le` label as a bound: +Inf spelled as Prometheus clients do; nullopt when absent or not a number.
std::optional<double> histogramBound(const std::string* le);

// Per metric, per rank: the values a mapper read.
class RankedValues {
 public:
  void set(const std::string& metric, const std::string& rank, double value) { values_[metric][rank] = value; }
  bool has(const std::string& metric) const { return values_.contains(metric); }
  // The metric over its ranks; nullopt when no rank had it.
  std::optional<double> fold(const std::string& metric, Across across) const;

 private:
  std::map<std::string, std::map<std::string, double>> values_;
};

// Per histogram key, per rank: the parts, merged into one histogram summed over ranks. A histogram
// without buckets up to +Inf, _sum or _count on some rank is not used (a note says so).
class RankedHistograms {
 public:
  HistogramParts& at(const std::string& key, const std::string& rank) { return parts_[key][rank]; }
  std::optional<LatencyHistogram> merge(const std::string& key, std::string_view name,
                                        std::set<std::string>& notes) const;
  const std::map<std::string, std::map<std::string, HistogramParts>>& all() const { return parts_; }

 private:
  std::map<std::string, std::map<std::string, HistogramParts>> parts_;
};

// "line 12: vllm:x: expected a finite value >= 0" when a scraped value cannot be a count or a ratio.
bool acceptableValue(const MetricSample& sample, std::set<std::string>& notes);

}  // namespace kvscope
