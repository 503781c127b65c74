#pragma once
// Identifiers and time shared by every layer. Plain integers: cheap to copy, hash and record.
#include <cstdint>

namespace kvscope {

using SessionId = std::uint64_t;
using RequestId = std::uint64_t;
using BlockHash = std::uint64_t;
// Index of a serving worker (a decode worker, or an instance in a non-disaggregated cluster).
// The router's candidate set and the prefix index's bitmask use this index.
using WorkerId = std::int32_t;
// Simulated or wall time in microseconds since the run started.
using SimTime = std::int64_t;

inline constexpr WorkerId kNoWorker = -1;
// Serving (decode or unified) workers in one cluster: the prefix index's worker sets are 512 bits
// (core/router/WorkerSet.h). Prefill workers are fewer in every deployment we know of.
inline constexpr int kMaxWorkers = 512;
inline constexpr int kMaxPrefillWorkers = 64;

constexpr SimTime secondsToTime(double s) { return static_cast<SimTime>(s * 1e6 + (s >= 0 ? 0.5 : -0.5)); }
constexpr double timeToSeconds(SimTime t) { return static_cast<double>(t) * 1e-6; }

}  // namespace kvscope
