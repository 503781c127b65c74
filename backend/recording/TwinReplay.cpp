#include "backend/recording/TwinReplay.h"

#include <cstdio>
#include <filesystem>

#include "backend/recording/EventRecorder.h"
#include "backend/recording/RecordingPlayer.h"
#include "core/events/RunChangeCounter.h"
#include "core/model/Error.h"
#include "core/router/PolicyRegistry.h"
#include "core/run/SimulationRun.h"
#include "core/scenario/Scenario.h"

namespace kvscope {

namespace {
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Knob and policy changes the run made while it ran: the twin starts from the recorded ones and
// follows none of them.
long changesIn(const std::string& recording) {
  RecordingPlayer player(recording);
  player.onlyKinds({"knob", "policy"});
  RunChangeCounter count;
  player.play(count);
  return count.changes();
}
}  // namespace

std::string describeTwinReplay(const TwinReplaySpec& spec) {
  std::string text = spec.policy;
  for (const auto& [knob, value] : spec.knobs) text += (text.empty() ? "" : " ") + knob + "=" + number(value);
  if (spec.seed) text += (text.empty() ? "" : " ") + std::string("seed=") + std::to_string(*spec.seed);
  return text.empty() ? std::string("as recorded") : text;
}

TwinReplayResult runTwinReplay(const TwinReplaySpec& spec, const std::string& out_kvrec,
                               const std::function<void(double)>& progress) {
  RecordingPlayer player(spec.recording);  // throws InputError naming the file
  const RunStarted& recorded = player.run();
  const double recorded_s = timeToSeconds(player.lastTime());
  const std::string scenario_name = spec.scenario.empty() ? recorded.scenario : spec.scenario;
  Scenario scenario;
  try {
    scenario = Scenario::load(scenario_name);
  } catch (const InputError& e) {
    throw InputError(spec.scenario.empty() ? "the recording's scenario '" + scenario_name +
                                                 "' is not here: name one (a bundled scenario or a file) to run "
                                                 "its cluster (" +
                                                 e.what() + ")"
                                           : std::string(e.what()));
  }
  SimulationOptions options;
  options.trace = std::filesystem::absolute(spec.recording).string();
  options.policy = spec.policy.empty() ? recorded.policy : spec.policy;
  if (!findPolicy(options.policy))
    throw InputError("policy '" + options.policy + "' is not one of the twin's: " + policyNameList());
  options.knobs.insert(recorded.knobs.begin(), recorded.knobs.end());
  for (const auto& [knob, value] : spec.knobs) options.knobs[knob] = value;
  options.seed = spec.seed ? *spec.seed : recorded.seed;
  // A twin's run is replayed for as long as it ran, so what it cut at its end is cut again (the replay
  // is then the run, decision for decision). A real cluster's requests took the time they took: its
  // last ones may finish after its last event, so the twin gives them kDrainS more.
  const bool real_cluster = recorded.profile == "live" || recorded.profile == "import";
  if (recorded_s > 0) options.duration_s = recorded_s + (real_cluster ? kDrainS : 0);
  if (progress)
    options.progress = [&progress](double sim_s, double end_s) {
      if (end_s > 0) progress(std::min(1.0, sim_s / end_s));
    };
  prepareRun(scenario, options);  // every input checked before the recorder truncates anything
  EventRecorder recorder(out_kvrec);
  if (!recorder.error().empty()) throw InputError(recorder.error());
  options.sinks.push_back(&recorder);
  TwinReplayResult result;
  result.summary = runSimulation(scenario, options);
  std::string error;
  if (!recorder.close(&error)) throw InputError(error);
  result.scenario = scenario.name;
  result.policy = options.policy;
  result.notes = result.summary.source_notes;
  if (const long changes = changesIn(spec.recording); changes > 0)
    result.notes.push_back("the run changed its knobs or policy " + std::to_string(changes) +
                           " times; the twin kept those it started with");
  return result;
}

}  // namespace kvscope
