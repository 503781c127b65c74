// `kvscope-cli serve`: the gRPC backend around a paced simulation (telemetry, control, health,
// reflection), optionally recording, around a recording in replay (--replay), or around a real
// cluster (--live cluster.yaml: SGLang /metrics and scheduler logs); stops cleanly on SIGINT/SIGTERM,
// closing the recording.
#include <signal.h>

#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <memory>

#include <spdlog/spdlog.h>

#include "cli/CliCommands.h"
#include "cli/RunOptions.h"
#include "live/ClusterConfigLoader.h"
#include "live/LiveSession.h"
#include "metrics/MetricsHttpServer.h"
#include "metrics/RunMetrics.h"
#include "model/Error.h"
#include "recording/EventRecorder.h"
#include "recording/RecordingReplay.h"
#include "run/SimulationRunner.h"
#include "service/KvscopeServer.h"
#include "service/TelemetryHub.h"

namespace kvscope::cli {

namespace {
struct ServeArgs {
  RunArgs run;
  ServerOptions server;
  std::string record;
  std::string metrics;  // --metrics ADDR:PORT
  double speed = 10;
  bool exit_when_done = false;
  std::string replay;  // --replay run.kvrec: serve the recording instead of a simulation
  std::string live;    // --live cluster.yaml: serve a real cluster's metrics and logs
};

// Every thread inherits this mask, so SIGINT/SIGTERM reach only the sigtimedwait below.
sigset_t blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Waits for SIGINT/SIGTERM (or, with --exit-when-done, for `done`); returns the signal, 0 for done.
int waitForStop(const sigset_t& stop_signals, bool exit_when_done, const std::function<bool()>& done) {
  const timespec tick{0, 200 * 1000 * 1000};
  while (true) {
    const int signal_number = sigtimedwait(&stop_signals, nullptr, &tick);
    if (signal_number > 0) return signal_number;
    if (exit_when_done && done()) return 0;
  }
}

// `serve --replay`: the same services around a recording. A damaged recording is served as far as
// it reads, after a warning per problem.
int serveReplay(const ServeArgs& a, const sigset_t& stop_signals) {
  TelemetryHub hub;
  RecordingReplay replay(a.replay, {&hub});
  // Started before the server, as a simulation is: a control call never waits on a replay that
  // has not begun.
  replay.start(a.speed);
  std::string error;
  auto server = KvscopeServer::start(a.server, hub, replay, &error);
  if (!server) throw InputError(error);  // ~RecordingReplay stops its thread
  std::printf("listening on %s\n", server->address().c_str());  // first: the line scripts wait for
  std::fflush(stdout);
  for (const auto& problem : replay.damage().problems) spdlog::warn("{}", problem);
  const RunStarted& run = replay.run();
  spdlog::info("serving recording {} (scenario {}, seed {}, {:.1f} s) on {} at {}x recorded time{}", a.replay,
               run.scenario, run.seed, timeToSeconds(replay.endTime()), server->address(), a.speed,
               a.server.token_file.empty() ? "" : ", control needs the bearer token");
  const int signal_number = waitForStop(stop_signals, a.exit_when_done, [&] { return replay.atEnd(); });
  if (signal_number > 0) spdlog::info("signal {}: stopping", signal_number);
  replay.stop();
  server->shutdown();
  spdlog::info("stopped at recorded {:.1f} s", timeToSeconds(replay.simTime()));
  return 0;
}
// Logs each worker's health when it changes, and each log file that cannot be read.
class LiveStatusLog {
 public:
  void update(const LiveSession& session) {
    const auto statuses = session.statuses();
    for (std::size_t i = 0; i < statuses.size(); ++i) {
      const auto& s = statuses[i];
      if (s.health == WorkerHealth::Unknown) continue;
      const std::string key = std::string(toString(s.health)) + s.reason;
      if (health_[s.name] == key) continue;
      health_[s.name] = key;
      if (s.health == WorkerHealth::Ok) spdlog::info("live: {} /metrics ok", s.name);
      else spdlog::warn("live: {} is {}: {}", s.name, toString(s.health), s.reason);
    }
    for (const auto& l : session.logStats()) {
      if (logs_[l.path] == l.tail.error) continue;
      logs_[l.path] = l.tail.error;
      if (l.tail.error.empty()) spdlog::info("live: following {}", l.path);
      else spdlog::warn("live: log {}: {}", l.path, l.tail.error);
    }
  }

 private:
  std::map<std::string, std::string> health_, logs_;
};

// `serve --live`: the same services around a real cluster, watched through its /metrics and logs.
int serveLive(const ServeArgs& a, const sigset_t& stop_signals) {
  ClusterConfig config = ClusterConfigLoader::load(a.live);
  TelemetryHub hub;
  std::vector<EventSink*> sinks{&hub};
  std::unique_ptr<EventRecorder> recorder;
  if (!a.record.empty()) {
    recorder = std::make_unique<EventRecorder>(a.record);
    sinks.push_back(recorder.get());
  }
  RunMetrics metrics;
  std::unique_ptr<MetricsHttpServer> metrics_server;
  if (!a.metrics.empty()) {
    std::string why;
    metrics_server = MetricsHttpServer::start(a.metrics, a.server.insecure, metrics, &why);
    if (!metrics_server) throw InputError(why);
    sinks.push_back(&metrics);
  }
  const std::size_t workers = config.workers.size();
  std::size_t logs = config.client_logs.size();
  for (const auto& w : config.workers) logs += w.logs.size();
  const std::string name = config.name;
  LiveSession session(std::move(config), sinks);
  session.start();
  std::string error;
  auto server = KvscopeServer::start(a.server, hub, session, &error);
  if (!server) {
    session.stop();
    if (recorder) recorder->close(nullptr);
    throw InputError(error);
  }
  std::printf("listening on %s\n", server->address().c_str());
  if (metrics_server) std::printf("metrics on http://%s/metrics\n", metrics_server->address().c_str());
  std::fflush(stdout);
  spdlog::info("watching live cluster {} ({} workers, {} log files) on {}{}", name, workers, logs, server->address(),
               a.record.empty() ? "" : ", recording to " + a.record);
  LiveStatusLog status;
  const timespec tick{0, 200 * 1000 * 1000};
  int signal_number = 0;
  while (signal_number <= 0) {
    signal_number = sigtimedwait(&stop_signals, nullptr, &tick);
    status.update(session);
  }
  spdlog::info("signal {}: stopping", signal_number);
  session.stop();
  server->shutdown();
  if (metrics_server) metrics_server->stop();
  if (recorder && !recorder->close(&error)) throw InputError(error);
  for (const auto& l : session.logStats())
    spdlog::info("live: {}: {} lines ({} known, {} unknown, {} malformed, {} traceback)", l.path, l.lines.lines,
                 l.lines.known, l.lines.unknown, l.lines.malformed, l.lines.folded);
  spdlog::info("stopped after {:.1f} s{}", timeToSeconds(session.simTime()), a.record.empty() ? "" : "; recording closed");
  return 0;
}
}  // namespace

Command addServe(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  auto* sub = app.add_subcommand("serve", "Serve a simulation, or a recording (--replay), over gRPC (Telemetry, Control, health, reflection)");
  addRunOptions(sub, a->run);
  sub->add_option("--listen", a->server.listen, "ADDR:PORT to listen on (port 0: any free port)")->capture_default_str();
  sub->add_option("--token-file", a->server.token_file, "Control calls need 'authorization: Bearer <token from this file>'");
  sub->add_option("--tls-cert", a->server.tls_cert, "PEM certificate for TLS");
  sub->add_option("--tls-key", a->server.tls_key, "PEM private key for TLS");
  sub->add_flag("--insecure", a->server.insecure, "Allow a non-loopback address without a token");
  sub->add_option("--record", a->record, "Record the run to this .kvrec file");
  sub->add_option("--metrics", a->metrics, "Serve Prometheus metrics of the run at http://ADDR:PORT/metrics (port 0: any free port)");
  sub->add_option("--speed", a->speed, "Pace: simulated seconds per wall second (0 = as fast as possible)")
      ->check(CLI::Range(0.0, 100000.0))
      ->capture_default_str();
  sub->add_flag("--exit-when-done", a->exit_when_done, "Stop serving when the run ends (default: serve until SIGINT)");
  // A recording brings its own run: the options that describe or record a simulation make no sense with it.
  auto* replay = sub->add_option("--replay", a->replay, "Serve this .kvrec recording (paced at --speed, seekable) instead of a simulation");
  for (const char* simulation_only : {"--scenario", "--trace", "--set", "--policy", "--seed", "--duration", "--start-window",
                                      "--loop", "--time-scale", "--lenient", "--record", "--metrics"})
    replay->excludes(simulation_only);
  // A real cluster runs on its own clock: nothing of a simulation's shape or pace applies.
  auto* live = sub->add_option("--live", a->live, "Serve a real cluster described by this YAML file (SGLang /metrics, scheduler logs)");
  live->excludes(replay);
  for (const char* simulation_only : {"--scenario", "--trace", "--set", "--policy", "--seed", "--duration", "--start-window",
                                      "--loop", "--time-scale", "--lenient", "--speed", "--exit-when-done"})
    live->excludes(simulation_only);
  return [a] {
    const sigset_t stop_signals = blockStopSignals();
    if (!a->replay.empty()) return serveReplay(*a, stop_signals);
    if (!a->live.empty()) return serveLive(*a, stop_signals);
    auto prepared = prepareRun(Scenario::load(a->run.scenario), toSimulationOptions(a->run));
    TelemetryHub hub;
    std::unique_ptr<EventRecorder> recorder;
    std::vector<EventSink*> sinks{&hub};
    if (!a->record.empty()) {
      recorder = std::make_unique<EventRecorder>(a->record);
      sinks.push_back(recorder.get());
    }
    // Bound before the run starts, so a busy or refused address fails before any work.
    RunMetrics metrics;
    std::unique_ptr<MetricsHttpServer> metrics_server;
    if (!a->metrics.empty()) {
      std::string why;
      metrics_server = MetricsHttpServer::start(a->metrics, a->server.insecure, metrics, &why);
      if (!metrics_server) throw InputError(why);
      sinks.push_back(&metrics);
    }
    const std::string scenario = prepared.scenario.name;
    SimulationRunner runner(std::move(prepared.scenario), std::move(prepared.workload), sinks);
    // The run starts first, so a control call never waits on a run that has not begun; events
    // before the first subscriber stay in the hub's replay buffer.
    runner.start(a->speed);
    std::string error;
    auto server = KvscopeServer::start(a->server, hub, runner, &error);
    if (!server) {
      runner.stop();
      runner.waitFinished();
      if (recorder) recorder->close(nullptr);
      throw InputError(error);
    }
    // The one line scripts and tests read to find the port (stdout, flushed at once).
    std::printf("listening on %s\n", server->address().c_str());
    if (metrics_server) std::printf("metrics on http://%s/metrics\n", metrics_server->address().c_str());
    std::fflush(stdout);
    spdlog::info("serving scenario {} on {} at {}x real time{}{}", scenario, server->address(), a->speed,
                 a->server.token_file.empty() ? "" : ", control needs the bearer token",
                 a->record.empty() ? "" : ", recording to " + a->record);

    int signal_number = 0;
    const timespec tick{0, 200 * 1000 * 1000};
    while (signal_number <= 0) {
      signal_number = sigtimedwait(&stop_signals, nullptr, &tick);
      if (a->exit_when_done && runner.finished()) break;
    }
    if (signal_number > 0) spdlog::info("signal {}: stopping", signal_number);
    runner.stop();
    runner.waitFinished();
    server->shutdown();
    if (metrics_server) metrics_server->stop();
    if (recorder && !recorder->close(&error)) throw InputError(error);
    spdlog::info("stopped at simulated {:.1f} s{}", timeToSeconds(runner.simTime()),
                 a->record.empty() ? "" : "; recording closed");
    return 0;
  };
}

}  // namespace kvscope::cli
