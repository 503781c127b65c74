#pragma once
// What the modes of `kvscope-cli serve` share: their options, where their events go (the hub, a
// recording, a Prometheus endpoint), and how they wait for SIGINT/SIGTERM.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/RunOptions.h"
#include "app/cli/StopSignals.h"
#include "backend/metrics/MetricsHttpServer.h"
#include "backend/metrics/RunMetrics.h"
#include "backend/notify/FindingWebhook.h"
#include "backend/recording/EventRecorder.h"
#include "backend/recording/MarkedRunRecorder.h"
#include "backend/service/KvscopeServer.h"
#include "backend/service/TelemetryHub.h"
#include "core/scenario/HardwareProfile.h"

namespace kvscope::cli {

struct ServeArgs {
  RunArgs run;
  ServerOptions server;
  std::string record;
  std::string runs;            // --runs DIR: one recording and summary per marked run (live sessions only)
  std::string twin_check;      // --twin-check SCENARIO: with --runs, the twin on each run's traffic
  std::string metrics;         // --metrics ADDR:PORT
  std::string notify_webhook;  // --notify-webhook URL: each finding posted as JSON
  double speed = 10;
  bool exit_when_done = false;
  std::string replay;               // --replay run.kvrec: serve the recording instead of a simulation
  std::string live;                 // --live cluster.yaml: serve a real cluster's metrics and logs
  std::vector<std::string> router;  // --router D0,D1,D2: serve the Router service for these decode workers
  std::vector<std::string> prefill{"P0"};
  long long kv_capacity = HardwareProfile{}.decode_kv_pool_tokens;
  int block_size = 24;
};

// Where a serve mode's events go: the hub (gRPC subscribers) and, when asked, a recording, the
// marked runs' recordings and summaries, a Prometheus endpoint and a webhook for findings. All are opened and bound on
// construction, before anything runs, so a bad path or a busy address fails before any work.
class ServeOutputs {
 public:
  explicit ServeOutputs(const ServeArgs& a);
  TelemetryHub& hub() { return hub_; }
  const std::vector<EventSink*>& sinks() const { return sinks_; }
  // The lines scripts and tests read to find the ports (stdout, flushed at once).
  void announce(const KvscopeServer& server) const;
  // Stops the metrics endpoint and closes the recordings; throws InputError if it cannot be closed.
  void close();
  // After a failed start: the same, without reporting (the start's error is the one to show).
  void abandon();

 private:
  TelemetryHub hub_;
  std::unique_ptr<EventRecorder> recorder_;
  std::unique_ptr<MarkedRunRecorder> runs_;
  RunMetrics metrics_;
  std::unique_ptr<MetricsHttpServer> metrics_server_;
  std::unique_ptr<FindingWebhook> webhook_;
  std::vector<EventSink*> sinks_;
};

// Waits for SIGINT/SIGTERM (or, with exit_when_done, for `done`); returns the signal, 0 for done.
// `tick` runs every 200 ms while waiting.
int waitForStop(const StopSignals& stop_signals, bool exit_when_done, const std::function<bool()>& done,
                const std::function<void()>& tick = {});

int serveLive(const ServeArgs& a, const StopSignals& stop_signals);
int serveRouter(const ServeArgs& a, const StopSignals& stop_signals);

}  // namespace kvscope::cli
