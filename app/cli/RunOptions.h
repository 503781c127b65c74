#pragma once
// The options that describe a run (scenario, workload, knobs, seed, duration), shared by `simulate`
// and `serve` so both read them the same way.
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/run/SimulationRun.h"

namespace kvscope::cli {

struct RunArgs {
  std::string scenario;  // "": scenarioOf() decides
  std::string trace;
  std::vector<std::string> sets;
  std::string policy;
  std::optional<std::uint64_t> seed;
  std::optional<double> duration;
  std::optional<double> start_window;
  std::string dispatch;  // --dispatch (or its older name --loop): the scenario's `dispatch`
  std::optional<double> time_scale;
  std::optional<long> max_inflight_sessions;
  std::optional<long> max_inflight_requests;
  std::optional<double> request_timeout;
  std::optional<double> wall_deadline;
  bool lenient = false;
};

void addRunOptions(CLI::App* sub, RunArgs& a);
// Throws InputError for a malformed --set.
SimulationOptions toSimulationOptions(const RunArgs& a);
// The scenario a run uses: --scenario, else a recorded run's own (--trace RUN.kvrec, when it names a
// scenario there is), else e3-load-floor.
std::string scenarioOf(const RunArgs& a);
std::string scenarioOf(const std::string& scenario, const std::string& trace);
// Throws InputError ("--record PATH: is a FIFO, ...") unless `path` may be written as a file
// (AtomicFile::target), before any work starts; an empty path (option not given) passes.
void checkOutputFile(const char* option, const std::string& path);

}  // namespace kvscope::cli
