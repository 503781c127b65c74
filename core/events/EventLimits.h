#pragma once
// How big one event may be. Text that comes from outside - a router's Report, a worker's
// log line, a recording's frame - is cut at these limits where it enters (RouterService::apply,
// TelemetryHub), with a visible marker, so one 4 MiB reason cannot become a telemetry event that no
// subscriber can receive. The other fields of an event are numbers and lists bounded by the
// cluster's size, so with the texts capped a serialised kvscope.v1.Event stays under kMaxEventBytes,
// and every client sets its receive limit to kClientReceiveLimitBytes, far above it.
#include <cstddef>
#include <string>

#include "core/events/Event.h"

namespace kvscope {

inline constexpr std::size_t kMaxReasonBytes = 16 * 1024;   // a reason or error; a crash's carries its traceback
inline constexpr std::size_t kMaxLabelBytes = 256;          // a name, a `who`, a policy, a parameter value
inline constexpr std::size_t kMaxEventBytes = 1024 * 1024;  // one serialised event, texts capped
inline constexpr std::size_t kClientReceiveLimitBytes = 64 * 1024 * 1024;  // what KVScope's clients accept
inline constexpr int kMaxRetractedRequests = 65536;                        // requests one Retraction may list

// Cuts `text` to at most `max` bytes (max >= 64) when longer: its head and tail with
// "\n[... N bytes cut ...]\n" between them (a traceback's last line, the exception, survives), never
// splitting a UTF-8 sequence. True when it cut.
bool capText(std::string& text, std::size_t max);

// Whether any free-text field of `payload` is over its limit (cheap: sizes only).
bool exceedsTextLimits(const EventPayload& payload);
// Caps every free-text field of `payload`; true when anything was cut.
bool capEventText(EventPayload& payload);

}  // namespace kvscope
