#include "backend/live/MetricsScraper.h"

#include <chrono>
#include <cstdio>

#include <httplib.h>

#include "core/live/ExpositionParser.h"
#include "core/live/VllmMetricsMapper.h"
#include "core/model/NumberText.h"

namespace kvscope {

namespace {

struct Url {
  std::string origin;  // scheme://host:port
  std::string path;
};

bool splitUrl(const std::string& url, Url& out, std::string& why) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos || url.substr(0, scheme_end) != "http") {
    why = "expected an http://HOST:PORT/PATH URL, got '" + url + "'";
    return false;
  }
  const auto path = url.find('/', scheme_end + 3);
  out.origin = url.substr(0, path);
  out.path = path == std::string::npos ? "/metrics" : url.substr(path);
  if (out.origin.size() <= scheme_end + 3) {
    why = "expected a host in '" + url + "'";
    return false;
  }
  return true;
}

}  // namespace

MetricsScraper::MetricsScraper(std::vector<ScrapeTarget> targets, ScrapeOptions options, LiveCluster& cluster)
    : options_(options), cluster_(cluster) {
  for (auto& t : targets) {
    WorkerMetricsTracker tracker(t.worker);
    targets_.push_back(std::unique_ptr<Target>(new Target{std::move(t), std::move(tracker), {}}));
  }
}

MetricsScraper::~MetricsScraper() { stop(); }

void MetricsScraper::start() {
  if (running_.exchange(true)) return;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    targets_[i]->thread = std::thread([this, i] {
      while (running_) {
        const auto began = std::chrono::steady_clock::now();
        scrapeOnce(i);
        std::unique_lock lock(mutex_);
        wake_.wait_until(lock, began + std::chrono::milliseconds(options_.interval_ms), [this] { return !running_; });
      }
    });
  }
}

void MetricsScraper::stop() {
  {
    std::lock_guard lock(mutex_);
    running_ = false;
  }
  wake_.notify_all();
  for (auto& t : targets_)
    if (t->thread.joinable()) t->thread.join();
}

MetricsFetch MetricsScraper::fetch(const std::string& target, const ScrapeOptions& options) {
  MetricsFetch r;
  const auto done = [&](WorkerHealth health, std::string reason) {
    r.health = health;
    r.reason = std::move(reason);
    return r;
  };
  Url url;
  std::string why;
  if (!splitUrl(target, url, why)) return done(WorkerHealth::Unreachable, why);

  httplib::Client client(url.origin);
  const auto ms = [](int v) { return std::chrono::milliseconds(v); };
  client.set_connection_timeout(ms(options.connect_timeout_ms));
  client.set_read_timeout(ms(options.read_timeout_ms));
  client.set_write_timeout(ms(options.read_timeout_ms));
  client.set_keep_alive(false);

  const auto began = std::chrono::steady_clock::now();
  const auto deadline = began + ms(options.deadline_ms);
  bool too_big = false, too_slow = false;
  // The deadline covers the status line and headers too: a server sending them a byte at a time
  // never trips the per-read timeout, and the body callback below only runs once they are in. A
  // watchdog shuts the socket at the deadline (httplib's stop() is its thread-safe way to do so).
  std::mutex watch_mutex;
  std::condition_variable watch_wake;
  bool answered = false, expired = false;
  std::thread watchdog([&] {
    std::unique_lock lock(watch_mutex);
    if (watch_wake.wait_until(lock, deadline, [&] { return answered; })) return;
    expired = true;
    client.stop();
  });
  auto result = client.Get(url.path, [&](const char* data, std::size_t size) {
    if (r.body.size() + size > options.max_body_bytes) return !(too_big = true);
    if (std::chrono::steady_clock::now() > deadline) return !(too_slow = true);
    r.body.append(data, size);
    return true;
  });
  {
    std::lock_guard lock(watch_mutex);
    answered = true;
  }
  watch_wake.notify_one();
  watchdog.join();
  too_slow = too_slow || expired;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (too_big)
    return done(WorkerHealth::Unreachable, "GET " + target + ": answer larger than " +
                                               std::to_string(options.max_body_bytes) + " bytes; abandoned");
  if (too_slow)
    return done(WorkerHealth::Unreachable, "GET " + target + ": no complete answer within " +
                                               secondsText(options.deadline_ms / 1000.0) + "; abandoned");
  if (!result)
    return done(WorkerHealth::Unreachable, "GET " + target + ": " + httplib::to_string(result.error()) + " (after " +
                                               secondsText(r.seconds) + ")");
  if (result->status != 200)
    return done(WorkerHealth::Degraded, "GET " + target + ": HTTP " + std::to_string(result->status));
  return done(WorkerHealth::Ok, "");
}

ScrapeResult MetricsScraper::scrapeOnce(std::size_t i) {
  Target& t = *targets_.at(i);
  ScrapeResult r;
  const auto done = [&](WorkerHealth health, std::string reason) {
    r.health = health;
    r.reason = std::move(reason);
    cluster_.setHealth(t.spec.status_index, r.health, r.reason);
    return r;
  };
  const SimTime asked_at = cluster_.now();
  const MetricsFetch answer = fetch(t.spec.url, options_);
  r.seconds = answer.seconds;
  r.bytes = answer.body.size();
  if (answer.health != WorkerHealth::Ok) return done(answer.health, answer.reason);

  const Exposition exposition = ExpositionParser().parse(answer.body);
  const EngineMetrics metrics = mapEngineMetrics(t.spec.worker.engine, exposition);
  std::string stale;
  if (metrics.any()) {
    MetricsUpdate update = t.tracker.update(metrics, asked_at);
    stale = update.staleReason();
    if (update.gauges) cluster_.setGauges(*update.gauges, asked_at);
    if (!update.events.empty()) cluster_.post(std::move(update.events));
    r.applied = true;
  }
  // The first reason wins: unreadable text, then missing SGLang metrics, then slowness.
  if (!exposition.problems.empty()) {
    const std::size_t more = exposition.problems.size() - 1 + exposition.problems_dropped;
    return done(WorkerHealth::Degraded, "/metrics " + exposition.problems.front().message() +
                                            (more ? " (and " + std::to_string(more) + " more problems)" : ""));
  }
  if (!metrics.any() || !metrics.notes.empty())
    return done(WorkerHealth::Degraded,
                metrics.notes.empty()
                    ? std::string("no ") + (t.spec.worker.engine == EngineKind::Vllm ? "vLLM" : "SGLang") + " metrics"
                    : metrics.notes.front());
  if (r.seconds * 1000 > options_.slow_ms)
    return done(WorkerHealth::Degraded, "slow: /metrics answered in " + secondsText(r.seconds));
  if (!stale.empty()) return done(WorkerHealth::Degraded, stale);
  return done(WorkerHealth::Ok, "");
}

}  // namespace kvscope
