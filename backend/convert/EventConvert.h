#pragma once
// The one place that maps kvscope.v1 protobuf messages to and from the core's value types
// (ARCHITECTURE.md: proto <-> domain conversion lives in one place in backend/). Services, recordings and
// clients call these; nothing above backend/ includes a generated header, and core/ never sees one.
//
// core -> proto never fails. proto -> core validates everything the core relies on (a payload is
// present, enum values are known, worker indices fit the 64-worker mask, at most 6 score components
// per candidate) and returns false with a message naming the field, e.g.
// "route.candidates[2].worker: 600 is outside 0..511". It never crashes or throws on any input, and
// leaves `*out` untouched on failure. `error` may be null.
#include <string>

#include "core/events/Event.h"
#include "core/knobs/Knob.h"
#include "kvscope/v1/events.pb.h"
#include "kvscope/v1/knobs.pb.h"

namespace kvscope {

// Bounds the wire enforces on indices (the core's WorkerId and prefill indices): -1 means "none"
// where an event allows it; per-worker tables (snapshot gauges, candidates) need a real index.
inline constexpr int kMaxWireWorkers = kMaxWorkers;         // decode/unified workers: 0..511
inline constexpr int kMaxWirePrefill = kMaxPrefillWorkers;  // prefill workers: 0..63
inline constexpr int kMaxWireComponents = 6;                // CandidateScore::components

// ---- Events --------------------------------------------------------------------------------------
void toProto(const Event& in, v1::Event* out);
bool fromProto(const v1::Event& in, Event* out, std::string* error);

// The event's kind name as the core spells it ("route", "snapshot", ...; eventKindName of the
// converted event), without converting it: what Subscribe's kinds filter compares. "" without payload.
const char* eventKindName(const v1::Event& e);

// ---- Payloads other layers store on their own ----------------------------------------------------
void toProto(const Snapshot& in, v1::Snapshot* out);
bool fromProto(const v1::Snapshot& in, Snapshot* out, std::string* error);

// Sets build_version to this build's KVSCOPE_VERSION: the core's RunStarted does not carry one, so
// fromProto drops it (read it from the proto message when needed).
void toProto(const RunStarted& in, v1::RunStarted* out);
bool fromProto(const v1::RunStarted& in, RunStarted* out, std::string* error);

void toProto(const KnobChanged& in, v1::KnobChanged* out);
bool fromProto(const v1::KnobChanged& in, KnobChanged* out, std::string* error);

void toProto(const PolicyChanged& in, v1::PolicyChanged* out);
// Control.MarkRun answers with the markers it put into the stream.
void toProto(const RunMarked& in, v1::RunMarked* out);
bool fromProto(const v1::PolicyChanged& in, PolicyChanged* out, std::string* error);

// ---- Knobs and policies --------------------------------------------------------------------------
// The core's spec table is static (string_views into literals), so there is no fromProto: a client
// keeps the remote specs as protobuf messages (or looks the name up in its own KnobRegistry).
// `policies` is the spec's comma-separated list split into names ("all" stays "all").
void toProto(const KnobSpec& in, v1::KnobSpec* out);
// A policy by its CLI name and the knobs it reads: those naming it and the "all" ones, in the
// registry's order.
void policyToProto(std::string_view name, v1::Policy* out);

}  // namespace kvscope
