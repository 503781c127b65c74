#include "app/cli/RunOptions.h"

#include <cstdio>
#include <filesystem>

#include "backend/recording/RecordingPlayer.h"
#include "core/io/AtomicFile.h"
#include "core/knobs/KnobRegistry.h"
#include "core/model/Error.h"
#include "core/scenario/Scenario.h"

namespace kvscope::cli {

void addRunOptions(CLI::App* sub, RunArgs& a) {
  sub->add_option("--scenario", a.scenario,
                  "Bundled scenario name or scenario file (default: e3-load-floor, or with --trace RUN.kvrec the run's "
                  "own)");
  sub->add_option("--trace", a.trace, "Replay this trace (file or directory) instead of the scenario's workload");
  sub->add_option("--set", a.sets, "Set a knob, KNOB=VALUE (repeatable; see `kvscope-cli policies`)");
  sub->add_option("--policy", a.policy, "Routing policy (overrides the scenario's)");
  sub->add_option("--seed", a.seed, "Random seed (overrides the scenario's)")
      ->check(CLI::Range(0.0, 9007199254740992.0).description("a whole number >= 0"));
  sub->add_option("--duration", a.duration, "Simulated seconds (overrides the scenario's)")
      ->check(CLI::Range(0.001, 2.6e6).description("in (0, 30 days]"));
  sub->add_option(
         "--start-window", a.start_window,
         "Closed loop: start sessions spread over this many seconds (a --trace defaults to the scenario's window)")
      ->check(CLI::Range(0.0, 2.6e6).description("in [0, 30 days]"));
  // The scenario's `dispatch` field; --loop is its older name (open or closed).
  sub->add_option("--dispatch,--loop", a.dispatch,
                  "When turns fire: open (each at its trace time), closed (a session's next turn its think time "
                  "after the previous finished), tracets (at max(previous finished, its trace time): the lab's "
                  "default), thinktime (turn 1 at its trace time, then previous finish + think time), burst (every "
                  "session's first turn at 0, each next one when the previous finished). Default: the scenario's; "
                  "for --trace, open when every session is one request, else closed")
      ->check(CLI::IsMember({"open", "closed", "tracets", "thinktime", "burst"}));
  sub->add_option("--time-scale", a.time_scale, "Multiply trace times by this (2 = half the rate)")
      ->check(CLI::Range(1e-6, 1e6).description("in (0, 1e6]"));
  sub->add_option("--max-inflight-sessions", a.max_inflight_sessions,
                  "At most this many sessions in flight; later ones wait for a slot in start order (the lab's "
                  "--max-inflight-sessions; 0 = no cap; not with --dispatch open)")
      ->check(CLI::Range(0L, 1000000000L));
  sub->add_option("--max-inflight-requests", a.max_inflight_requests,
                  "At most this many requests in flight; later ones wait in the order they became ready (a "
                  "replayer's request semaphore, the lab's E-series concurrency_limit; 0 = no cap)")
      ->check(CLI::Range(0L, 1000000000L));
  sub->add_option("--request-timeout", a.request_timeout,
                  "Seconds before a request fails unfinished (the knob request_timeout_s; the lab's replayer: 600)")
      ->check(CLI::Range(1.0, 86400.0).description("in [1, 86400]"));
  sub->add_option("--wall-deadline", a.wall_deadline,
                  "End the run at this simulated second: requests not done by then fail as not completed "
                  "(the lab's REPLAY_MAX_DURATION; 0 = none)")
      ->check(CLI::Range(0.0, 2.6e6).description("in [0, 30 days]"));
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
  if (!a.dispatch.empty()) options.dispatch = parseDispatch(a.dispatch);
  options.max_inflight_sessions = a.max_inflight_sessions;
  options.max_inflight_requests = a.max_inflight_requests;
  options.request_timeout_s = a.request_timeout;
  options.wall_deadline_s = a.wall_deadline;
  options.lenient = a.lenient;
  return options;
}

std::string scenarioOf(const RunArgs& a) { return scenarioOf(a.scenario, a.trace); }

std::string scenarioOf(const std::string& scenario, const std::string& trace) {
  if (!scenario.empty()) return scenario;
  if (trace.size() > 6 && trace.substr(trace.size() - 6) == ".kvrec" && std::filesystem::is_regular_file(trace)) {
    const std::string recorded = RecordingPlayer(trace).run().scenario;
    try {
      Scenario::resolve(recorded);
      return recorded;
    } catch (const InputError&) {
      std::fprintf(stderr,
                   "kvscope-cli: the recording's scenario '%s' is not here: running it on e3-load-floor's "
                   "cluster (give --scenario)\n",
                   printableText(recorded).c_str());
    }
  }
  return "e3-load-floor";
}

void checkOutputFile(const char* option, const std::string& path) {
  std::string error;
  if (!path.empty() && !AtomicFile::target(path, &error)) throw InputError(std::string(option) + " " + error);
}

}  // namespace kvscope::cli
