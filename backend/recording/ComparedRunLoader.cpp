#include "backend/recording/ComparedRunLoader.h"

#include <filesystem>

#include "backend/recording/RecordingPlayer.h"
#include "core/metrics/RunAnalysis.h"

namespace kvscope {

namespace {
// Every event of a recording, header first, to `sink` and `analysis`; the file's damage as warnings.
// The summary names the policy the run started with when no event named one.
RunSummary playWhole(const std::string& path, EventSink& sink, RunAnalysis& analysis,
                     std::vector<std::string>& warnings) {
  RecordingPlayer player(path);
  sink.onEvent(Event{0, 0, player.run()});
  player.play(sink);
  for (const std::string& p : player.damage().problems) {
    std::string line = path;
    line += ": ";
    line += p;
    warnings.push_back(std::move(line));
  }
  RunSummary s = analysis.summary();
  if (s.policy.empty()) s.policy = player.run().policy;
  return s;
}
}  // namespace

ComparedRunLoad loadComparedRun(const std::string& path_a, const std::string& path_b,
                                const ComparedRunContext& context) {
  auto run = std::make_shared<ComparedRun>();
  ComparedRunLoad out;
  run->name_a = std::filesystem::path(path_a).filename().string();
  run->name_b = std::filesystem::path(path_b).filename().string();
  if (run->name_a == run->name_b) {  // two runs named alike in different folders: say which
    run->name_a = path_a;
    run->name_b = path_b;
  }
  RunAnalysis a;
  run->summary_a = playWhole(path_a, a, a, out.warnings);

  struct StoreAndSummary : EventSink {
    TelemetryStore* store = nullptr;
    RunAnalysis analysis;
    void onEvent(const Event& e) override {
      store->ingest(e);
      analysis.onEvent(e);
    }
  } b;
  b.store = &run->store_b;
  run->summary_b = playWhole(path_b, b, b.analysis, out.warnings);
  run->b_label = context.b_label;
  run->summary_base = context.base;
  run->base_label = context.base_label;
  run->side_by_side =
      RunSideBySide::of(run->summary_a, run->summary_b, run->summary_base ? &*run->summary_base : nullptr);
  out.run = std::move(run);
  return out;
}

}  // namespace kvscope
