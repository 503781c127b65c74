#pragma once
// The numbers of an observation a real cluster's router reports (Router.Report): nothing
// negative that counts or measures, nothing past what a worker can hold, no time past 30 days, a
// TTFT within its E2E. Checked before anything is applied, so one bad number cannot corrupt a
// worker's load, a summary (a negative token count, an INT64_MIN) or the metrics.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/events/Event.h"

namespace kvscope {

struct ObservationLimits {
  std::span<const std::int64_t> kv_capacity;  // per decode worker, tokens; 0 = unknown (max_tokens then)
  std::int64_t max_tokens = 0;                // a request's prompt or output, and any unknown capacity
};

inline constexpr SimTime kMaxObservedTime = SimTime{30} * 24 * 3600 * 1'000'000;  // 30 days in us
inline constexpr std::int64_t kMaxObservedBytes = std::int64_t{1} << 40;          // one transfer: 1 TiB
inline constexpr std::int32_t kMaxObservedCount = 1'000'000;  // requests aborted, sessions hit at once

// nullopt when every number is in range, else "FIELD: VALUE is ..." (e.g. "admission.tokens: -5 is
// negative"). Worker indices must already be checked (LiveRouter::checkWorker).
std::optional<std::string> checkObservationNumbers(const EventPayload& payload, const ObservationLimits& limits);

}  // namespace kvscope
