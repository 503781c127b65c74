// `serve --live cluster.yaml` (a real cluster watched through its /metrics and scheduler logs) and
// `serve --router D0,D1,...` (the router core steering a real cluster's router): the same services
// as a simulation, around a real cluster.
#include <map>

#include <spdlog/spdlog.h>

#include "app/cli/ServeSupport.h"
#include "backend/live/LiveSession.h"
#include "core/live/ClusterConfigLoader.h"
#include "core/model/Error.h"
#include "core/run/LiveRouter.h"

namespace kvscope::cli {

namespace {
std::string runsNote(const ServeArgs& a) { return a.runs.empty() ? "" : ", marked runs to " + a.runs + "/"; }

// Logs each worker's health when it changes, and each log file that cannot be read.
class LiveStatusLog {
 public:
  void update(const LiveSession& session) {
    for (const auto& s : session.statuses()) {
      if (s.health == WorkerHealth::Unknown) continue;
      const std::string key = std::string(toString(s.health)) + s.reason;
      if (health_[s.name] == key) continue;
      health_[s.name] = key;
      if (s.health == WorkerHealth::Ok)
        spdlog::info("live: {} /metrics ok", s.name);
      else
        spdlog::warn("live: {} is {}: {}", s.name, toString(s.health), s.reason);
    }
    for (const auto& l : session.logStats()) {
      if (logs_[l.path] == l.tail.error) continue;
      logs_[l.path] = l.tail.error;
      if (l.tail.error.empty())
        spdlog::info("live: following {}", l.path);
      else
        spdlog::warn("live: log {}: {}", l.path, l.tail.error);
    }
  }

 private:
  std::map<std::string, std::string> health_, logs_;
};
}  // namespace

int serveLive(const ServeArgs& a, const StopSignals& stop_signals) {
  ClusterConfig config = ClusterConfigLoader::load(a.live);
  ServeOutputs out(a);
  const std::size_t workers = config.workers.size();
  std::size_t logs = config.client_logs.size();
  for (const auto& w : config.workers) logs += w.logs.size();
  const std::string name = config.name;
  LiveSession::Options options;
  options.warn = [](const std::string& line) { spdlog::warn("{}", line); };
  LiveSession session(std::move(config), out.sinks(), options);
  session.start();
  std::string error;
  auto server = KvscopeServer::start(a.server, out.hub(), session, &error, session.router());
  if (!server) {
    session.stop();
    out.abandon();
    throw InputError(error);
  }
  out.announce(*server);
  spdlog::info("watching live cluster {} ({} workers, {} log files) on {}{}{}{}", name, workers, logs,
               server->address(), session.router() ? ", serving the Router service" : "",
               a.record.empty() ? "" : ", recording to " + a.record, runsNote(a));
  LiveStatusLog status;
  const int signal_number = waitForStop(stop_signals, false, {}, [&] { status.update(session); });
  spdlog::info("signal {}: stopping", signal_number);
  session.stop();
  server->shutdown();
  out.close();
  for (const auto& l : session.logStats())
    spdlog::info("live: {}: {} lines ({} known, {} unknown, {} malformed, {} traceback)", l.path, l.lines.lines,
                 l.lines.known, l.lines.unknown, l.lines.malformed, l.lines.folded);
  spdlog::info("stopped after {:.1f} s{}", timeToSeconds(session.simTime()),
               a.record.empty() ? "" : "; recording closed");
  return 0;
}

int serveRouter(const ServeArgs& a, const StopSignals& stop_signals) {
  LiveClusterSpec spec;
  for (const auto& name : a.router) spec.workers.push_back({name, WorkerRole::Decode, a.kv_capacity});
  for (const auto& name : a.prefill) spec.prefill.push_back({name, WorkerRole::Prefill, 0});
  spec.block_size = a.block_size;
  if (!a.run.policy.empty()) spec.policy = a.run.policy;
  spec.knobs = toSimulationOptions(a.run).knobs;
  ServeOutputs out(a);
  LiveRouter router(spec, out.sinks());
  std::string error;
  auto server = KvscopeServer::start(a.server, out.hub(), router, &error, &router);
  if (!server) {
    router.stop();
    out.abandon();
    throw InputError(error);
  }
  out.announce(*server);
  spdlog::info("routing for {} decode workers under {} on {}{}{}{}", spec.workers.size(), spec.policy,
               server->address(), a.server.token_file.empty() ? "" : ", router and control calls need the bearer token",
               a.record.empty() ? "" : ", recording to " + a.record, runsNote(a));
  const int signal_number = waitForStop(stop_signals, false, {});
  spdlog::info("signal {}: stopping", signal_number);
  server->shutdown();
  router.stop();
  out.close();
  return 0;
}

}  // namespace kvscope::cli
