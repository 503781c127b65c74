#include "app/cli/ServeSupport.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include <spdlog/spdlog.h>

#include "backend/recording/TwinReplay.h"
#include "backend/service/ListenAddress.h"
#include "core/metrics/RunSideBySide.h"
#include "core/model/Error.h"
#include "core/scenario/Scenario.h"

namespace kvscope::cli {

namespace {
// One line per completed run, as the lab's sweep script's operator reads the serve log.
void logRun(const RecordedRun& r) {
  if (!r.error.empty()) {
    spdlog::error("run {} '{}' ended ({}), but its files are incomplete: {}", r.run.start.index, r.run.start.name,
                  r.run.ended_by, r.error);
    return;
  }
  spdlog::info("run {} '{}' ended: {} requests, {:.1f}% failed, summary {}", r.run.start.index, r.run.start.name,
               r.run.summary.total, r.run.summary.failure_rate * 100, r.summary);
}

// "TTFT p90 (s) 2.290 / 2.347 (+2.5%)": the run's value, the twin's, and the error.
std::string checkCell(const SideBySideRow& row) {
  const auto value = [&](std::optional<double> v) {
    return v ? fmt::format("{:.{}f}", *v, row.decimals) : std::string("-");
  };
  std::string cell = row.label + " " + value(row.a) + " / " + value(row.b);
  if (const auto r = row.relativeChange()) cell += fmt::format(" ({:+.1f}%)", *r * 100);
  return cell;
}

// --twin-check: the twin on the run's own traffic with the router's policy and knobs, on SCENARIO's
// cluster (a live run's recording holds no cluster shape), recorded beside the run as
// NNN-name.twin.kvrec (kvscope --compare NNN-name.kvrec NNN-name.twin.kvrec draws both); one line of
// measured / predicted per metric. On the recorder's writer thread: the next run's files wait for it.
void logTwinCheck(const RecordedRun& r, const std::string& scenario) {
  TwinReplaySpec spec;
  spec.recording = r.recording;
  spec.scenario = scenario;
  std::string twin = r.recording;
  twin.insert(twin.size() - std::string(".kvrec").size(), ".twin");
  try {
    const TwinReplayResult result = runTwinReplay(spec, twin);
    const RunSideBySide check = RunSideBySide::of(r.run.summary, result.summary);
    std::string cells;
    for (const SideBySideRow& row : check.summary)
      if (row.label.find("TTFT") != std::string::npos || row.label.find("E2E") != std::string::npos ||
          row.label == "APC (%)" || row.label == "failure rate (%)")
        cells += (cells.empty() ? "" : "; ") + checkCell(row);
    std::string shares;
    for (const WorkerSideBySide& w : check.workers)
      shares += fmt::format("{}{} {:.1f}/{:.1f}", shares.empty() ? "" : ", ", w.worker, w.share.a.value_or(0),
                            w.share.b.value_or(0));
    spdlog::info("run {} '{}' twin check ({} on {}'s cluster; run / twin): {}; shares % {}; twin's run {}",
                 r.run.start.index, r.run.start.name, result.policy, result.scenario, cells, shares, twin);
    for (const std::string& note : result.notes) spdlog::info("run {} twin check: {}", r.run.start.index, note);
  } catch (const std::exception& e) {
    spdlog::warn("run {} '{}': no twin check: {}", r.run.start.index, r.run.start.name, e.what());
  }
}
}  // namespace

ServeOutputs::ServeOutputs(const ServeArgs& a) : sinks_{&hub_} {
  checkOutputFile("--record", a.record);
  if (!a.record.empty()) {
    recorder_ = std::make_unique<EventRecorder>(a.record);
    // A folder that cannot take the file, or another writer of it: refused now, not at exit.
    if (!recorder_->error().empty()) throw InputError("--record: " + recorder_->error());
    sinks_.push_back(recorder_.get());
  }
  if (!a.twin_check.empty()) Scenario::resolve(a.twin_check);  // a name that is no scenario: refused now
  if (!a.runs.empty()) {
    runs_ = std::make_unique<MarkedRunRecorder>(a.runs, [scenario = a.twin_check](const RecordedRun& r) {
      logRun(r);
      if (!scenario.empty() && r.error.empty()) logTwinCheck(r, scenario);
    });
    for (const auto& kept : runs_->recovered())
      spdlog::warn("--runs {}: kept {}, the recording of a run a killed session left open", a.runs, kept);
    sinks_.push_back(runs_.get());
  }
  if (!a.metrics.empty()) {
    std::string why;
    metrics_server_ = MetricsHttpServer::start(a.metrics, a.server.insecure, metrics_, &why);
    if (!metrics_server_) throw InputError(why);
    sinks_.push_back(&metrics_);
  }
  if (!a.notify_webhook.empty()) {
    std::string why;
    webhook_ = FindingWebhook::start(
        {.url = a.notify_webhook}, [](const std::string& line) { spdlog::warn("{}", line); }, &why);
    if (!webhook_) throw UsageError(why);
    sinks_.push_back(webhook_.get());
  }
}

void ServeOutputs::announce(const KvscopeServer& server) const {
  std::printf("listening on %s\n", server.address().c_str());
  if (metrics_server_) std::printf("metrics on http://%s/metrics\n", metrics_server_->address().c_str());
  std::fflush(stdout);
  // Reachable from elsewhere with a token but no TLS: the token crosses the network in clear.
  std::string host, why;
  int port = 0;
  if (server.tokenRequired() && !server.tls() && splitListenAddress(server.address(), &host, &port, &why) &&
      !isLoopbackHost(host))
    spdlog::warn(
        "listening on {} with a token but without TLS: the token travels in clear; give --tls-cert and "
        "--tls-key, or listen on 127.0.0.1",
        server.address());
}

void ServeOutputs::close() {
  if (metrics_server_) metrics_server_->stop();
  // The run's last findings posted before exit, within a bound: a dead endpoint costs 10 s at most.
  if (webhook_) {
    webhook_->close(std::chrono::seconds(10));
    const FindingWebhook::Counts counts = webhook_->counts();
    spdlog::info("--notify-webhook: {} findings posted, {} failed, {} dropped", counts.posted, counts.failed,
                 counts.dropped);
  }
  // Both closed before either failure is reported: one bad file must not cost the other.
  std::string error, runs_error;
  const bool recorded = !recorder_ || recorder_->close(&error);
  const bool runs_recorded = !runs_ || runs_->close(&runs_error);
  if (!recorded) throw InputError(error);
  if (!runs_recorded) throw InputError(runs_error);
}

void ServeOutputs::abandon() {
  if (metrics_server_) metrics_server_->stop();
  if (recorder_) recorder_->close(nullptr);
  if (runs_) runs_->close(nullptr);
}

int waitForStop(const StopSignals& stop_signals, bool exit_when_done, const std::function<bool()>& done,
                const std::function<void()>& tick) {
  while (true) {
    if (const int signal_number = stop_signals.wait(std::chrono::milliseconds(200))) return signal_number;
    if (tick) tick();
    if (exit_when_done && done()) return 0;
  }
}

}  // namespace kvscope::cli
