// `kvscope-cli serve`: the gRPC backend around a paced simulation (telemetry, control, health,
// reflection), optionally recording, around a recording in replay (--replay), around a real
// cluster (--live cluster.yaml: SGLang or vLLM /metrics, logs and KV events), or around the router core
// steering a real cluster's router (--router: the Router service); stops cleanly on SIGINT/SIGTERM,
// closing the recording.
#include <spdlog/spdlog.h>

#include "app/cli/CliCommands.h"
#include "app/cli/ServeSupport.h"
#include "backend/recording/RecordingReplay.h"
#include "core/model/Error.h"
#include "core/run/SimulationRunner.h"
#include "core/run/WhatIfForecaster.h"

namespace kvscope::cli {

namespace {
// `serve --replay`: the same services around a recording. A damaged recording is served as far as
// it reads, after a warning per problem.
int serveReplay(const ServeArgs& a, const StopSignals& stop_signals) {
  ServeOutputs out(a);  // the hub only: --replay excludes --record and --metrics
  RecordingReplay replay(a.replay, out.sinks());
  // Started before the server, as a simulation is: a control call never waits on a replay that
  // has not begun.
  replay.start(a.speed);
  std::string error;
  auto server = KvscopeServer::start(a.server, out.hub(), replay, &error);
  if (!server) throw InputError(error);  // ~RecordingReplay stops its thread
  out.announce(*server);                 // first: the line scripts wait for
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

// Where it listens, who may call, and how many streams it holds: the server's own options.
void addServerOptions(CLI::App& sub, ServerOptions& server) {
  sub.add_option(
         "--listen", server.listen,
         "ADDR:PORT to listen on (port 0: any free port), or unix:PATH for a Unix domain socket (local like loopback)")
      ->capture_default_str();
  sub.add_option("--token-file", server.token_file,
                 "Control, Router and Telemetry calls need 'authorization: Bearer <token from this file>'");
  sub.add_option("--tls-cert", server.tls_cert, "PEM certificate for TLS");
  sub.add_option("--tls-key", server.tls_key, "PEM private key for TLS");
  sub.add_flag("--insecure", server.insecure, "Allow a non-loopback address without a token");
  sub.add_flag("--open-telemetry", server.open_telemetry,
               "With --token-file: let Telemetry (Subscribe, GetState) in without the token");
  // The wrong-token throttle's limits (AuthFailureThrottle): the right token is never refused.
  auto& throttle = server.auth_throttle;
  sub.add_option("--auth-free-failures", throttle.free_failures,
                 "Wrong-token calls a host may make before its lockouts start (1 s, doubling)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  sub.add_option_function<double>(
         "--auth-max-lockout",
         [&throttle](double s) {
           throttle.max_lockout =
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
         },
         "Longest lockout of a host that keeps failing, seconds (default 60)")
      ->check(CLI::Range(1.0, 86400.0));
  sub.add_option("--auth-failures-per-minute", throttle.global_failures_per_minute,
                 "Wrong-token calls per minute from all hosts together; past it every wrong token is refused")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  sub.add_option("--max-subscribers", server.max_subscribers, "Telemetry streams open at once; more are refused")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub.add_option("--max-subscribers-per-host", server.max_subscribers_per_host,
                 "Telemetry streams one client host may hold at once (every loopback address is one host)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub.add_option("--stalled-subscriber", server.stalled_subscriber_s,
                 "Seconds a Telemetry stream may leave a message unread before it is ended, its slot freed")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
}

// What it serves instead of a simulation: a recording, a real cluster, or a real cluster's router;
// each excludes the options that only describe a simulation.
void addServedSourceOptions(CLI::App& sub, ServeArgs& a) {
  // A recording brings its own run: the options that describe or record a simulation make no sense with it.
  auto* replay = sub.add_option("--replay", a.replay,
                                "Serve this .kvrec recording (paced at --speed, seekable) instead of a simulation");
  for (const char* simulation_only :
       {"--scenario", "--trace", "--set", "--policy", "--seed", "--duration", "--start-window", "--dispatch",
        "--time-scale", "--max-inflight-sessions", "--request-timeout", "--wall-deadline", "--lenient", "--record",
        "--metrics", "--runs"})
    replay->excludes(simulation_only);
  // A real cluster runs on its own clock: nothing of a simulation's shape or pace applies.
  auto* live = sub.add_option(
      "--live", a.live, "Serve a real cluster described by this YAML file (SGLang or vLLM /metrics, logs, KV events)");
  live->excludes(replay);
  for (const char* simulation_only :
       {"--scenario", "--trace", "--set", "--policy", "--seed", "--duration", "--start-window", "--dispatch",
        "--time-scale", "--max-inflight-sessions", "--request-timeout", "--wall-deadline", "--lenient", "--speed",
        "--exit-when-done"})
    live->excludes(simulation_only);
  auto* router = sub.add_option("--router", a.router,
                                "Serve the Router service for a real cluster with these decode workers (D0,D1,...) "
                                "instead of a simulation; --policy and --set apply")
                     ->delimiter(',');
  sub.add_option("--prefill", a.prefill, "With --router: the prefill workers' names")
      ->delimiter(',')
      ->needs(router)
      ->capture_default_str();
  sub.add_option("--kv-capacity", a.kv_capacity, "With --router: each decode worker's KV pool, tokens")
      ->needs(router)
      ->check(CLI::Range(1.0, 1e12))
      ->capture_default_str();
  sub.add_option("--block-size", a.block_size, "With --router: tokens per block hash the router sends")
      ->needs(router)
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  for (const char* simulation_only :
       {"--scenario", "--trace", "--seed", "--duration", "--start-window", "--dispatch", "--time-scale",
        "--max-inflight-sessions", "--wall-deadline", "--lenient", "--replay", "--exit-when-done", "--live"})
    router->excludes(simulation_only);
}

// `serve` of a simulation: paced, with what-if previews forked from it, recorded when asked.
int serveSimulation(const ServeArgs& a, const StopSignals& stop_signals) {
  auto prepared = prepareRun(Scenario::load(scenarioOf(a.run)), toSimulationOptions(a.run));
  ServeOutputs out(a);
  const std::string scenario = prepared.scenario.name;
  // Control.Preview forks the run from its start: the forecaster keeps a copy of it and, as the
  // first sink, every knob and policy change the run takes.
  WhatIfForecaster forecaster(prepared);
  std::vector<EventSink*> sinks = out.sinks();
  sinks.insert(sinks.begin(), &forecaster);
  SimulationRunner runner(std::move(prepared.scenario), std::move(prepared.workload), sinks);
  // The run starts first, so a control call never waits on a run that has not begun; events
  // before the first subscriber stay in the hub's replay buffer.
  runner.start(a.speed);
  std::string error;
  auto server = KvscopeServer::start(a.server, out.hub(), runner, &error, nullptr, &forecaster);
  if (!server) {
    runner.stop();
    runner.waitFinished();
    out.abandon();
    throw InputError(error);
  }
  out.announce(*server);
  spdlog::info("serving scenario {} on {} at {}x real time{}{}", scenario, server->address(), a.speed,
               a.server.token_file.empty() ? "" : ", control needs the bearer token",
               a.record.empty() ? "" : ", recording to " + a.record);
  const int signal_number = waitForStop(stop_signals, a.exit_when_done, [&] { return runner.finished(); });
  if (signal_number > 0) spdlog::info("signal {}: stopping", signal_number);
  runner.stop();
  runner.waitFinished();
  server->shutdown();
  out.close();
  spdlog::info("stopped at simulated {:.1f} s{}", timeToSeconds(runner.simTime()),
               a.record.empty() ? "" : "; recording closed");
  return 0;
}

}  // namespace

Command addServe(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  auto* sub =
      app.add_subcommand("serve",
                         "Serve a simulation, a recording (--replay), a real cluster (--live) or a real "
                         "cluster's router core (--router) over gRPC (Telemetry, Control, Router, health, reflection)");
  addRunOptions(sub, a->run);
  addServerOptions(*sub, a->server);
  sub->add_option("--record", a->record, "Record the run to this .kvrec file");
  auto* runs = sub->add_option("--runs", a->runs,
                               "With --live or --router: write each run marked by `kvscope-cli mark` to DIR "
                               "(NNN-name.kvrec, NNN-name.json, runs.json)")
                   ->type_name("DIR");
  auto* twin_check =
      sub->add_option("--twin-check", a->twin_check,
                      "With --runs: after each marked run, the twin on its traffic with the run's policy and knobs on "
                      "SCENARIO's cluster, logged as run / twin per metric and recorded as NNN-name.twin.kvrec")
          ->type_name("SCENARIO");
  sub->add_option("--metrics", a->metrics,
                  "Serve Prometheus metrics of the run at http://ADDR:PORT/metrics (port 0: any free port)");
  sub->add_option("--notify-webhook", a->notify_webhook,
                  "POST each finding as JSON to this http(s) URL when it appears and when it resolves "
                  "(a \"text\" field for chat webhooks)")
      ->type_name("URL");
  sub->add_option("--speed", a->speed, "Pace: simulated seconds per wall second (0 = as fast as possible)")
      ->check(CLI::Range(0.0, 100000.0))
      ->capture_default_str();
  sub->add_flag("--exit-when-done", a->exit_when_done, "Stop serving when the run ends (default: serve until SIGINT)");
  addServedSourceOptions(*sub, *a);
  // Only a live session has run markers (Control.MarkRun); a simulation or a replay is one run already.
  sub->callback([a, runs, twin_check] {
    if (runs->count() > 0 && a->live.empty() && a->router.empty())
      throw CLI::ValidationError("--runs", "needs --live or --router: only a live session has marked runs");
    if (twin_check->count() > 0 && runs->count() == 0)
      throw CLI::ValidationError("--twin-check", "needs --runs: it checks each marked run");
  });
  return [a] {
    // Control changes (with the caller's address and admission) and lockouts of failing addresses.
    a->server.log = [](const std::string& line) { spdlog::info("{}", line); };
    // A refused address is a usage error (exit 2), found before any file is opened or run started.
    if (auto refused = KvscopeServer::listenRefusal(a->server)) throw UsageError(*refused);
    if (!a->metrics.empty())
      if (auto refused = MetricsHttpServer::listenRefusal(a->metrics, a->server.insecure)) throw UsageError(*refused);
    if (!a->notify_webhook.empty())
      if (auto refused = FindingWebhook::urlRefusal(a->notify_webhook)) throw UsageError(*refused);
    const StopSignals stop_signals;  // before any thread starts
    if (!a->replay.empty()) return serveReplay(*a, stop_signals);
    if (!a->live.empty()) return serveLive(*a, stop_signals);
    if (!a->router.empty()) return serveRouter(*a, stop_signals);
    return serveSimulation(*a, stop_signals);
  };
}

}  // namespace kvscope::cli
