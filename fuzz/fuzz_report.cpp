// libFuzzer target for Router.Report: what a real cluster's router reports is untrusted.
// The input is a Report stream as the server receives it - a sequence of length-prefixed
// kvscope.v1.Observation messages (varint length, then the bytes; what does not parse is skipped, as
// gRPC would refuse it before the service sees it) - fed one by one to RouterService::apply, the
// function the Report reactor calls, around a standalone LiveRouter (as `serve --router` runs it)
// whose events go to the sinks `serve` gives it: RunMetrics (/metrics) and a SummaryCollector (the
// summary of a marked run). No network. An invalid observation only ends its stream: the next ones
// are applied as a new stream's would be.
//
// Invariants (promises of RouterService.h, LiveRouter.h, ObservationCheck.h and EventLimits.h):
//  - apply() never throws; a refusal comes with a message that names a field and is bounded;
//  - every published event fits kMaxEventBytes serialised and has no text over its limit;
//  - the router's gauges stay sane: 0 <= kv_used <= kv_capacity, no negative count;
//  - the summary and the metrics never show a negative count or a non-finite number.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/stubs/logging.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "backend/convert/EventConvert.h"
#include "backend/metrics/RunMetrics.h"
#include "backend/service/RouterService.h"
#include "core/events/EventLimits.h"
#include "core/metrics/SummaryCollector.h"
#include "core/run/LiveRouter.h"
#include "fuzz/FuzzSupport.h"
#include "kvscope/v1/router.pb.h"

namespace {

using namespace kvscope;
using fuzz::finding;

// Checks every event the router publishes (the router's ticker thread publishes snapshots too).
class CheckingSink : public EventSink {
 public:
  void onEvent(const Event& e) override {
    std::lock_guard lock(mutex_);
    if (exceedsTextLimits(e.payload)) finding(std::string("a text over its limit in a ") + eventKindName(e.payload));
    v1::Event wire;
    toProto(e, &wire);
    if (wire.ByteSizeLong() > kMaxEventBytes)
      finding(std::string("an event over kMaxEventBytes: ") + eventKindName(e.payload));
    if (const auto* s = std::get_if<Snapshot>(&e.payload))
      for (const auto& g : s->workers)
        if (g.kv_used < 0 || g.kv_used > g.kv_capacity || g.kv_peak < g.kv_used || g.running < 0 || g.queued < 0 ||
            g.resident_sessions < 0 || g.bindings < 0 || g.pending_seeds < 0)
          finding("insane gauges for worker " + std::to_string(g.worker) + ": kv " + std::to_string(g.kv_used) + "/" +
                  std::to_string(g.kv_capacity) + ", running " + std::to_string(g.running) + ", queued " +
                  std::to_string(g.queued) + ", pending seeds " + std::to_string(g.pending_seeds));
  }

 private:
  std::mutex mutex_;
};

void checkSummary(const RunSummary& s) {
  for (long n : {s.total, s.completed, s.failed, s.eviction_count, s.eviction_sessions_hit, s.seeds, s.reseeds,
                 s.direct_appends, s.link_dead_events, s.aborted_requests, s.worker_crashes, s.corrections})
    if (n < 0) finding("a negative count in the summary: " + std::to_string(n));
  if (s.eviction_max_tokens < 0 || !(s.eviction_mean_tokens >= 0) || !std::isfinite(s.eviction_mean_tokens))
    finding("eviction tokens out of range in the summary");
  for (const auto& w : s.workers)
    if (w.bindings < 0 || w.sessions < 0 || w.evictions < 0 || w.tokens_served < 0 || !std::isfinite(w.kv_peak_frac) ||
        w.kv_peak_frac < 0 || !std::isfinite(w.share))
      finding("a worker's summary out of range: " + w.id);
  for (const auto* sample : {&s.e2e_s, &s.ttft_s})
    if (!std::isfinite(sample->mean) || !std::isfinite(sample->p99)) finding("a latency summary that is not a number");
}

// A value in the exposition text that is negative (a counter or gauge of counts) or not a number.
void checkMetrics(const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? text.size() : end + 1;
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.rfind(' ');
    if (space == std::string::npos) finding("a /metrics line without a value: " + line);
    const std::string value = line.substr(space + 1);
    if (value == "NaN" || value == "+Inf" || value == "-Inf" || (!value.empty() && value[0] == '-'))
      finding("a /metrics value out of range: " + line);
  }
}

LiveClusterSpec cluster() {
  LiveClusterSpec spec;
  spec.name = "fuzz";
  spec.workers = {WorkerInfo{"D0", WorkerRole::Decode, 850000}, WorkerInfo{"D1", WorkerRole::Decode, 850000},
                  WorkerInfo{"D2", WorkerRole::Decode, 24 * 16}};  // a tiny pool fills up
  spec.prefill = {WorkerInfo{"P0", WorkerRole::Prefill, 0}};
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  google::protobuf::SetLogHandler(nullptr);  // invalid UTF-8 in string fields is logged on every run
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  CheckingSink checker;
  RunMetrics metrics;
  SummaryCollector summary;
  LiveRouter router(cluster(), {&checker, &metrics, &summary});
  RouterService service(router);

  google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
  for (int n = 0; n < 256; ++n) {
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length)) break;
    std::string bytes;
    if (!in.ReadString(&bytes, static_cast<int>(std::min<std::uint32_t>(length, 1 << 20)))) break;
    kvscope::v1::Observation observation;
    if (!observation.ParseFromString(bytes)) continue;
    std::string error;
    if (!service.apply(observation, &error)) {
      if (error.empty()) finding("a refusal without a message");
      if (error.size() > 4096) finding("a refusal message of " + std::to_string(error.size()) + " bytes");
    } else if (!error.empty()) {
      finding("an applied observation with an error: " + error);
    }
  }
  router.publishSnapshot();
  checkSummary(summary.summary());
  checkMetrics(metrics.render());
  router.stop();
  return 0;
}
