#include "app/cli/RunOptions.h"

#include "core/knobs/KnobRegistry.h"
#include "core/model/Error.h"
#include "core/sweep/AtomicFile.h"

namespace kvscope::cli {

void addRunOptions(CLI::App* sub, RunArgs& a) {
  sub->add_option("--scenario", a.scenario, "Bundled scenario name or scenario file")->capture_default_str();
  sub->add_option("--trace", a.trace, "Replay this trace (file or directory) instead of the scenario's workload");
  sub->add_option("--set", a.sets, "Set a knob, KNOB=VALUE (repeatable; see `kvscope-cli policies`)");
  sub->add_option("--policy", a.policy, "Routing policy (overrides the scenario's)");
  sub->add_option("--seed", a.seed, "Random seed (overrides the scenario's)")
      ->check(CLI::Range(0.0, 9007199254740992.0).description("a whole number >= 0"));
  sub->add_option("--duration", a.duration, "Simulated seconds (overrides the scenario's)")
      ->check(CLI::Range(0.001, 2.6e6).description("in (0, 30 days]"));
  sub->add_option("--start-window", a.start_window,
                  "Closed loop: start sessions spread over this many seconds (a --trace defaults to the scenario's window)")
      ->check(CLI::Range(0.0, 2.6e6).description("in [0, 30 days]"));
  // The scenario's `replay` field; named --loop on the command line because `serve --replay` names a recording.
  sub->add_option("--loop", a.replay,
                  "open: requests at their timestamps; closed: a session's next turn after the previous one "
                  "finished plus its think time (default: the scenario's `replay`; for --trace, open when every "
                  "session is one request)")
      ->check(CLI::IsMember({"open", "closed"}));
  sub->add_option("--time-scale", a.time_scale, "Open loop: multiply arrival times by this (2 = half the rate)")
      ->check(CLI::Range(1e-6, 1e6).description("in (0, 1e6]"));
  sub->add_flag("--lenient", a.lenient, "Skip malformed trace records (counted in the summary) instead of failing");
}

SimulationOptions toSimulationOptions(const RunArgs& a) {
  SimulationOptions options;
  for (const auto& s : a.sets)
    if (auto err = KnobRegistry::parseAssignment(s, options.knobs)) throw InputError("--set: " + *err);
  options.policy = a.policy;
  options.seed = a.seed;
  options.duration_s = a.duration;
  options.trace = a.trace;
  options.start_window_s = a.start_window;
  options.time_scale = a.time_scale;
  if (!a.replay.empty()) options.replay = a.replay == "open" ? ReplayMode::OpenLoop : ReplayMode::ClosedLoop;
  options.lenient = a.lenient;
  return options;
}

void checkOutputFile(const char* option, const std::string& path) {
  std::string error;
  if (!path.empty() && !AtomicFile::target(path, &error)) throw InputError(std::string(option) + " " + error);
}

}  // namespace kvscope::cli
