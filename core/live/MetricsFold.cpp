#include "core/live/MetricsFold.h"

#include <charconv>
#include <cmath>

namespace kvscope {

std::optional<double> histogramBound(const std::string* le) {
  if (!le) return std::nullopt;
  if (*le == "+Inf" || *le == "Inf" || *le == "inf") return INFINITY;
  double v = 0;
  const auto [end, ec] = std::from_chars(le->data(), le->data() + le->size(), v);
  if (ec != std::errc() || end != le->data() + le->size() || std::isnan(v)) return std::nullopt;
  return v;
}

bool HistogramParts::add(std::string_view suffix, const MetricSample& sample) {
  if (suffix == "_sum") {
    sum = sample.value;
  } else if (suffix == "_count") {
    count = sample.value;
  } else if (suffix == "_bucket") {
    if (const auto b = histogramBound(sample.label("le"))) buckets[*b] = sample.value;
  } else {
    return false;
  }
  return true;
}

std::optional<double> RankedValues::fold(const std::string& metric, Across across) const {
  const auto it = values_.find(metric);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  double total = 0;
  for (const auto& [rank, v] : it->second) total += v;
  return across == Across::Sum ? total : total / static_cast<double>(it->second.size());
}

std::optional<LatencyHistogram> RankedHistograms::merge(const std::string& key, std::string_view name,
                                                        std::set<std::string>& notes) const {
  const auto it = parts_.find(key);
  if (it == parts_.end()) return std::nullopt;
  LatencyHistogram merged;
  std::map<double, double> buckets;
  for (const auto& [rank, p] : it->second) {
    if (!p.count || !p.sum || p.buckets.empty() || !std::isinf(p.buckets.rbegin()->first)) {
      notes.insert(std::string(name) + ": incomplete histogram (needs buckets up to +Inf, _sum and _count); not used");
      return std::nullopt;
    }
    for (const auto& [b, c] : p.buckets) buckets[b] += c;
    merged.sum += *p.sum;
    merged.count += *p.count;
  }
  merged.buckets.assign(buckets.begin(), buckets.end());
  return merged;
}

bool acceptableValue(const MetricSample& sample, std::set<std::string>& notes) {
  if (std::isfinite(sample.value) && sample.value >= 0) return true;
  notes.insert("line " + std::to_string(sample.line) + ": " + sample.name + ": expected a finite value >= 0");
  return false;
}

}  // namespace kvscope
