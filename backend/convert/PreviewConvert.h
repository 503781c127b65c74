#pragma once
// Control.Preview's answer <-> the core's WhatIfResult. The server fills the message from the fork
// it ran; a client rebuilds the two futures (gauges as MinMaxSeries, the horizon's summary with the
// fields the preview table shows). proto -> core validates what the console would draw (sizes match,
// times ordered and inside [from, to], values finite, at most kMaxWireWorkers series) and returns
// false with the field named, leaving `*out` untouched: the answer comes from another process.
#include <string>

#include "core/run/WhatIfPreview.h"
#include "kvscope/v1/control.pb.h"

namespace kvscope {

void toProto(const WhatIfResult& in, v1::PreviewResponse* out);
bool fromProto(const v1::PreviewResponse& in, WhatIfResult* out, std::string* error);

}  // namespace kvscope
