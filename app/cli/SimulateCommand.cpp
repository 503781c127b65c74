// `kvscope-cli simulate`: runs a scenario to completion and prints its summary.
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "app/cli/RunOptions.h"
#include "backend/export/EventExporter.h"
#include "backend/recording/EventRecorder.h"
#include "core/model/Error.h"
#include "core/run/SimulationRun.h"

namespace kvscope::cli {

namespace {
struct SimulateArgs {
  RunArgs run;
  std::string format = "table";
  std::string events;
  std::string record;
  bool quiet = false;
};
}  // namespace

Command addSimulate(CLI::App& app) {
  auto a = std::make_shared<SimulateArgs>();
  auto* sub = app.add_subcommand("simulate", "Run a scenario on the simulated cluster and print its summary");
  addRunOptions(sub, a->run);
  sub->add_option("--format", a->format, "Output: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  sub->add_option("--events", a->events, "Also write every event as JSON lines to this file");
  sub->add_option("--record", a->record,
                  "Also record the run to this .kvrec file (replay it, `report` it, `export` it)");
  sub->add_flag("--quiet", a->quiet, "No progress line");
  return [a] {
    SimulationOptions options = toSimulationOptions(a->run);
    checkOutputFile("--events", a->events);
    checkOutputFile("--record", a->record);
    Scenario scenario = Scenario::load(scenarioOf(a->run));
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
