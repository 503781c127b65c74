// libFuzzer target for the Prometheus text parser and the SGLang and vLLM mappings behind it:
// a /metrics body is untrusted network input. Each input is parsed, mapped by both engines' mappers and fed to a
// worker tracker twice (so counter and histogram deltas run too). A crash, a hang, a sanitizer report
// or a broken invariant below is a finding.
//
// Invariants (each a promise of core/live/ExpositionParser.h or WorkerMetricsTracker.h):
//  - the sample count equals the samples held by the families, and stays within the limit;
//  - problems stay within the limit, each on a line of the body (0 = the whole body);
//  - every sample and label name is a valid Prometheus name;
//  - a body the parser accepts without problems still parses the same with one more blank line;
//  - the tracker's gauges (prefix-cache tokens included) are never negative and events per scrape stay bounded.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/live/ExpositionParser.h"
#include "core/live/SglangMetricsMapper.h"
#include "core/live/VllmMetricsMapper.h"
#include "core/live/WorkerMetricsTracker.h"
#include "fuzz/FuzzSupport.h"

namespace {

using namespace kvscope;
using fuzz::finding;

bool validName(std::string_view s, bool colon) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || (colon && c == ':');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  ExpositionLimits limits;
  limits.max_samples = 5000;  // small limits reach the limit paths
  limits.max_problems = 50;
  const ExpositionParser parser(limits);
  const Exposition e = parser.parse(body);

  std::size_t held = 0;
  for (const auto& f : e.families) {
    if (!validName(f.name, true)) finding("a family with an invalid name");
    held += f.samples.size();
    for (const auto& s : f.samples) {
      if (!validName(s.name, true)) finding("a sample with an invalid name");
      if (s.line < 1 || s.line > e.lines) finding("a sample outside the body's lines");
      for (const auto& l : s.labels)
        if (!validName(l.name, false)) finding("a label with an invalid name");
      if (s.labels.size() > limits.max_labels) finding("more labels than the limit");
    }
  }
  if (held != e.samples) finding("sample count differs from the samples held");
  if (e.samples > limits.max_samples) finding("more samples than the limit");
  if (e.problems.size() > limits.max_problems) finding("more problems than the limit");
  for (const auto& p : e.problems)
    if (p.line < 0 || p.line > e.lines) finding("a problem outside the body's lines");
  if (e.ok() && !body.empty()) {
    const Exposition again = parser.parse(std::string(body) + "\n");
    if (again.samples != e.samples || !again.ok()) finding("an accepted body changed with a trailing blank line");
  }

  for (const EngineKind engine : {EngineKind::Sglang, EngineKind::Vllm}) {
    LiveWorkerRef ref;
    ref.name = "D0";
    ref.worker = 0;
    ref.engine = engine;
    WorkerMetricsTracker tracker(ref);
    const EngineMetrics m = mapEngineMetrics(engine, e);
    for (int round = 0; round < 2; ++round) {
      const MetricsUpdate u = tracker.update(m);
      if (!u.gauges) finding("a decode worker without gauges");
      const WorkerGauges& g = *u.gauges;
      if (g.kv_used < 0 || g.kv_capacity < 0 || g.running < 0 || g.queued < 0 || g.pending_seeds < 0 ||
          g.prefix_queried_tokens < 0 || g.prefix_hit_tokens < 0 || g.external_queried_tokens < 0 ||
          g.external_hit_tokens < 0)
        finding("a negative gauge");
      if (u.events.size() > static_cast<std::size_t>(WorkerMetricsTracker::kMaxEventsPerScrape) + 1)
        finding("more events than the per-scrape bound");
    }
  }
  return 0;
}
