#pragma once
// Every tunable of the router, admission and cluster, typed and documented in one table
// (ARCHITECTURE.md D5). The GUI, the CLI's --set and the Control RPC all go through KnobRegistry.
#include <cstdint>
#include <string_view>

namespace kvscope {

enum class KnobId : std::uint8_t {
  LoadFloorK,
  StickyBonus,
  Epsilon,
  SessionSoftCap,
  DirectMaxUncachedTokens,
  SeedMinTurnId,
  MigrationRejectThreshold,
  PendingSeedBudget,
  AdmissionBackoffMs,
  AdmissionJitterMs,
  McTransferTimeoutS,
  McHandshakeTimeoutS,
  RequestTimeoutS,
  Rho,
  DecodeIterationS,
  Throughput,
  OverloadFactor,
  CacheThreshold,
  BalanceAbsThreshold,
  BalanceRelThreshold,
  OverlapScoreWeight,
  RouterTemperature,
  EvictionIntervalS,
  MaxTreeSize,
  DynamoCostForm,
  PrefillLoadScale,
  OverlapScoreCredit,
  DecodeActiveRequestWeight,
  CacheView,
  ProxyBlockTokens,
  ProxyLruBlocks,
  LinearCacheAlpha,
  CacheRatioGate,
  LmetricDecodeWeight,
  LeastworkKappa,
  ColdDBonus,
  UnreportedExpiryS,
  MaxTrackedRequests,
  MaxTrackedPerWorker,
  MaxTrackedBlockHashes,
  SessionIdleS,
  MaxTrackedSessions,
  Count
};

// Who reads a knob: every policy (admission, transfers, pools, cluster), or the policies whose
// PolicySpec lists it (core/router/PolicySpec.h).
enum class KnobScope : std::uint8_t { Shared, Policy };

struct KnobSpec {
  KnobId id;
  std::string_view name;
  std::string_view unit;
  double min;
  double max;
  double default_value;
  bool integer;
  KnobScope scope;
  std::string_view description;
};

}  // namespace kvscope
