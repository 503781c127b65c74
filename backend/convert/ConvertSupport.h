#pragma once
// Private to backend/convert/: the enum tables and field checks EventConvert.cpp and
// SnapshotConvert.cpp share. Errors are built only on the failure path, so decoding a valid
// stream allocates nothing for them.
#include <sstream>
#include <string>
#include <string_view>

#include "backend/convert/EventConvert.h"

namespace kvscope::convert {

// Writes the concatenated parts to *error (when given); returns false for `return fail(...)`.
template <class... Parts>
bool fail(std::string* error, const Parts&... parts) {
  if (error) {
    std::ostringstream os;
    (os << ... << parts);
    *error = os.str();
  }
  return false;
}

// Prepends the caller's context ("route.", "candidates[2].") to the error; returns false.
template <class... Parts>
bool prefix(std::string* error, const Parts&... parts) {
  if (error) {
    std::ostringstream os;
    (os << ... << parts);
    error->insert(0, os.str());
  }
  return false;
}

// ---- Enums: one table per core enum, core value <-> proto value (proto 0 is UNSPECIFIED) ---------
template <class Core, class Proto>
struct EnumPair {
  Core core;
  Proto proto;
};

inline constexpr EnumPair<WorkerRole, v1::WorkerRole> kWorkerRoles[] = {{WorkerRole::Prefill, v1::WORKER_ROLE_PREFILL},
                                                                        {WorkerRole::Decode, v1::WORKER_ROLE_DECODE},
                                                                        {WorkerRole::Unified, v1::WORKER_ROLE_UNIFIED}};
inline constexpr EnumPair<RoutePath, v1::RoutePath> kRoutePaths[] = {{RoutePath::Direct, v1::ROUTE_PATH_DIRECT},
                                                                     {RoutePath::Seed, v1::ROUTE_PATH_SEED},
                                                                     {RoutePath::Reseed, v1::ROUTE_PATH_RESEED},
                                                                     {RoutePath::Transient, v1::ROUTE_PATH_TRANSIENT},
                                                                     {RoutePath::Local, v1::ROUTE_PATH_LOCAL}};
inline constexpr EnumPair<AdmissionResult, v1::AdmissionResult> kAdmissionResults[] = {
    {AdmissionResult::Admitted, v1::ADMISSION_RESULT_ADMITTED},
    {AdmissionResult::NoSpace, v1::ADMISSION_RESULT_NO_SPACE},
    {AdmissionResult::Rejected, v1::ADMISSION_RESULT_REJECTED}};
inline constexpr EnumPair<LinkState, v1::LinkState> kLinkStates[] = {{LinkState::Alive, v1::LINK_STATE_ALIVE},
                                                                     {LinkState::Suspect, v1::LINK_STATE_SUSPECT},
                                                                     {LinkState::Dead, v1::LINK_STATE_DEAD}};
inline constexpr EnumPair<EvictionGranularity, v1::EvictionGranularity> kGranularities[] = {
    {EvictionGranularity::Session, v1::EVICTION_GRANULARITY_SESSION},
    {EvictionGranularity::Block, v1::EVICTION_GRANULARITY_BLOCK}};
inline constexpr EnumPair<RequestStatus, v1::RequestStatus> kRequestStatuses[] = {
    {RequestStatus::Ok, v1::REQUEST_STATUS_OK}, {RequestStatus::Failed, v1::REQUEST_STATUS_FAILED}};
inline constexpr EnumPair<CorrectionFault, v1::CorrectionFault> kCorrectionFaults[] = {
    {CorrectionFault::Crash, v1::CORRECTION_FAULT_CRASH},
    {CorrectionFault::Drop, v1::CORRECTION_FAULT_DROP},
    {CorrectionFault::None, v1::CORRECTION_FAULT_NONE}};
inline constexpr EnumPair<RunAction, v1::RunAction> kRunActions[] = {{RunAction::Paused, v1::RUN_ACTION_PAUSED},
                                                                     {RunAction::Resumed, v1::RUN_ACTION_RESUMED},
                                                                     {RunAction::Speed, v1::RUN_ACTION_SPEED},
                                                                     {RunAction::Seek, v1::RUN_ACTION_SEEK}};

constexpr const auto& enumTable(WorkerRole) { return kWorkerRoles; }
constexpr const auto& enumTable(RoutePath) { return kRoutePaths; }
constexpr const auto& enumTable(AdmissionResult) { return kAdmissionResults; }
constexpr const auto& enumTable(LinkState) { return kLinkStates; }
constexpr const auto& enumTable(EvictionGranularity) { return kGranularities; }
constexpr const auto& enumTable(RequestStatus) { return kRequestStatuses; }
constexpr const auto& enumTable(CorrectionFault) { return kCorrectionFaults; }
constexpr const auto& enumTable(RunAction) { return kRunActions; }
inline constexpr EnumPair<RunMarkAction, v1::RunMarkAction> kRunMarkActions[] = {
    {RunMarkAction::Start, v1::RUN_MARK_ACTION_START}, {RunMarkAction::End, v1::RUN_MARK_ACTION_END}};
constexpr const auto& enumTable(RunMarkAction) { return kRunMarkActions; }
inline constexpr EnumPair<WorkerHealth, v1::WorkerHealth> kWorkerHealths[] = {
    {WorkerHealth::Unknown, v1::WORKER_HEALTH_UNKNOWN},
    {WorkerHealth::Ok, v1::WORKER_HEALTH_OK},
    {WorkerHealth::Degraded, v1::WORKER_HEALTH_DEGRADED},
    {WorkerHealth::Unreachable, v1::WORKER_HEALTH_UNREACHABLE}};
constexpr const auto& enumTable(WorkerHealth) { return kWorkerHealths; }

// A core value outside its enum (never produced by the core) becomes UNSPECIFIED, which readers reject.
template <class Core>
auto enumToProto(Core value) {
  const auto& table = enumTable(value);
  for (const auto& p : table)
    if (p.core == value) return p.proto;
  return decltype(table[0].proto){};
}

// Proto3 enums are open: a message may carry any int (an older or hostile writer).
template <class Core>
bool decodeEnum(int value, Core* out, const char* field, std::string* error) {
  for (const auto& p : enumTable(Core{}))
    if (static_cast<int>(p.proto) == value) {
      *out = p.core;
      return true;
    }
  if (value == 0) return fail(error, field, ": unspecified (0)");
  return fail(error, field, ": unknown value ", value);
}

// ---- Indices ------------------------------------------------------------------------------------
inline bool decodeIndex(std::int32_t value, bool allow_none, int limit, std::int32_t* out, const char* field,
                        std::string* error) {
  const int lowest = allow_none ? -1 : 0;
  if (value < lowest || value >= limit) return fail(error, field, ": ", value, " is outside ", lowest, "..", limit - 1);
  *out = value;
  return true;
}
inline bool decodeWorker(std::int32_t value, bool allow_none, WorkerId* out, const char* field, std::string* error) {
  return decodeIndex(value, allow_none, kMaxWireWorkers, out, field, error);
}
inline bool decodePrefill(std::int32_t value, bool allow_none, std::int32_t* out, const char* field,
                          std::string* error) {
  return decodeIndex(value, allow_none, kMaxWirePrefill, out, field, error);
}

// A change's origin (ChangeAuthor.h) into and out of the `origin` field every operator-change message
// has; an in-process change (no origin) leaves the field unset.
template <class Message>
void toProto(const ChangeOrigin& in, Message* out) {
  if (!in.remote()) return;
  auto* origin = out->mutable_origin();
  origin->set_peer(in.peer);
  origin->set_identity(in.identity);
}
template <class Message>
ChangeOrigin originFromProto(const Message& in) {
  return in.has_origin() ? ChangeOrigin{in.origin().peer(), in.origin().identity()} : ChangeOrigin{};
}

// A process-lifetime pointer for a score component name (EventConvert.cpp explains why); nullptr
// when the name is refused (too long, or the table is full).
const char* internComponentName(std::string_view name);

// A request's shape (ShapeConvert.cpp); the decode checks sizes and the prompt's layout.
void shapeToProto(const RequestShape& in, v1::RequestShape* out);
bool shapeFromProto(const v1::RequestShape& in, RequestShape* out, std::string* error);

}  // namespace kvscope::convert
