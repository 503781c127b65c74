// `kvscope-cli simulate`: runs a scenario to completion and prints its summary.
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/CliCommands.h"
#include "export/EventExporter.h"
#include "recording/EventRecorder.h"
#include "knobs/KnobRegistry.h"
#include "model/Error.h"
#include "run/SimulationRun.h"

namespace kvscope::cli {

namespace {
struct SimulateArgs {
  std::string scenario = "e3-load-floor";
  std::string trace;
  std::vector<std::string> sets;
  std::string policy;
  std::optional<std::uint64_t> seed;
  std::optional<double> duration;
  std::optional<double> start_window;
  std::string replay;
  std::optional<double> time_scale;
  std::string format = "table";
  std::string events;
  std::string record;
  bool lenient = false;
  bool quiet = false;
};
}  // namespace

Command addSimulate(CLI::App& app) {
  auto a = std::make_shared<SimulateArgs>();
  auto* sub = app.add_subcommand("simulate", "Run a scenario on the simulated cluster and print its summary");
  sub->add_option("--scenario", a->scenario, "Bundled scenario name or scenario file")->capture_default_str();
  sub->add_option("--trace", a->trace, "Replay this trace (file or directory) instead of the scenario's workload");
  sub->add_option("--set", a->sets, "Set a knob, KNOB=VALUE (repeatable; see `kvscope-cli policies`)");
  sub->add_option("--policy", a->policy, "Routing policy (overrides the scenario's)");
  sub->add_option("--seed", a->seed, "Random seed (overrides the scenario's)")
      ->check(CLI::Range(0.0, 9007199254740992.0).description("a whole number >= 0"));
  sub->add_option("--duration", a->duration, "Simulated seconds (overrides the scenario's)")
      ->check(CLI::Range(0.001, 2.6e6).description("in (0, 30 days]"));
  sub->add_option("--start-window", a->start_window,
                  "Closed loop: start sessions spread over this many seconds (a --trace defaults to the scenario's window)")
      ->check(CLI::Range(0.0, 2.6e6).description("in [0, 30 days]"));
  sub->add_option("--replay", a->replay,
                  "open: requests at their timestamps; closed: a session's next turn after the previous one "
                  "finished plus its think time (default: the scenario's; for --trace, open when every session "
                  "is one request)")
      ->check(CLI::IsMember({"open", "closed"}));
  sub->add_option("--time-scale", a->time_scale, "Open loop: multiply arrival times by this (2 = half the rate)")
      ->check(CLI::Range(1e-6, 1e6).description("in (0, 1e6]"));
  sub->add_option("--format", a->format, "Output: table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  sub->add_option("--events", a->events, "Also write every event as JSON lines to this file");
  sub->add_option("--record", a->record, "Also record the run to this .kvrec file (replay it, `report` it, `export` it)");
  sub->add_flag("--lenient", a->lenient, "Skip malformed trace records (counted in the summary) instead of failing");
  sub->add_flag("--quiet", a->quiet, "No progress line");
  return [a] {
    SimulationOptions options;
    for (const auto& s : a->sets)
      if (auto err = KnobRegistry::parseAssignment(s, options.knobs)) throw InputError("--set: " + *err);
    options.policy = a->policy;
    options.seed = a->seed;
    options.duration_s = a->duration;
    options.trace = a->trace;
    options.start_window_s = a->start_window;
    options.time_scale = a->time_scale;
    if (!a->replay.empty()) options.replay = a->replay == "open" ? ReplayMode::OpenLoop : ReplayMode::ClosedLoop;
    options.lenient = a->lenient;
    Scenario scenario = Scenario::load(a->scenario);
    std::unique_ptr<EventExporter> events;
    if (!a->events.empty()) {
      events = EventExporter::create(EventExporter::Format::JsonLines, a->events);
      options.sinks.push_back(events.get());
    }
    std::unique_ptr<EventRecorder> recorder;
    if (!a->record.empty()) {
      recorder = std::make_unique<EventRecorder>(a->record);
      options.sinks.push_back(recorder.get());
    }
    const bool tty = !a->quiet && isatty(STDERR_FILENO);
    if (tty)
      options.progress = [](double sim, double end) {
        std::fprintf(stderr, "\rsimulating %6.0f / %.0f s (%3.0f%%)", sim, end, end > 0 ? 100 * sim / end : 100.0);
      };
    RunSummary summary = runSimulation(scenario, options);
    if (tty) std::fprintf(stderr, "\r%60s\r", "");
    std::string error;
    if (events && !events->finish(&error)) throw InputError(error);
    if (recorder && !recorder->close(&error)) throw InputError(error);
    if (a->format == "json")
      std::printf("%s\n", summary.toJson().dump(2).c_str());
    else
      std::fputs(summary.toTable().c_str(), stdout);
    return 0;
  };
}

}  // namespace kvscope::cli
