#pragma once
// Polls each SGLang or vLLM worker's Prometheus /metrics with cpp-httplib, one poll
// loop (thread) per worker so a slow or dead worker never delays the others. Every request is
// bounded: connect timeout, read timeout, a deadline for the whole answer and a body size limit.
// A worker that refuses, times out or answers too much is "unreachable"; one that answers slowly,
// with an HTTP error, with garbage or without SGLang metrics is "degraded"; each with the reason,
// in LiveCluster's worker status. Whatever it gets, the scraper never throws or crashes.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/live/LiveCluster.h"
#include "core/live/WorkerMetricsTracker.h"

namespace kvscope {

struct ScrapeTarget {
  LiveWorkerRef worker;
  std::string url;           // http://HOST:PORT/metrics
  std::size_t status_index;  // the worker's index in LiveCluster::workerNames()
};

struct ScrapeOptions {
  int interval_ms = 1000;
  int connect_timeout_ms = 1000;
  int read_timeout_ms = 2000;  // per socket read
  int deadline_ms = 3000;      // the whole answer (a server dripping bytes cannot hold a loop)
  int slow_ms = 1000;          // an answer slower than this is degraded
  std::size_t max_body_bytes = 8u << 20;
};

struct ScrapeResult {
  WorkerHealth health = WorkerHealth::Unknown;
  std::string reason;
  double seconds = 0;
  std::size_t bytes = 0;
  bool applied = false;  // gauges or events reached the cluster
};

// One GET of a /metrics URL under ScrapeOptions' bounds.
struct MetricsFetch {
  WorkerHealth health = WorkerHealth::Unknown;  // Ok: body holds the answer; else reason says why not
  std::string reason;
  std::string body;
  double seconds = 0;
};

class MetricsScraper {
 public:
  // One bounded GET, on the caller's thread (`kvscope-cli scrape` uses it too).
  static MetricsFetch fetch(const std::string& url, const ScrapeOptions& options);

  MetricsScraper(std::vector<ScrapeTarget> targets, ScrapeOptions options, LiveCluster& cluster);
  ~MetricsScraper();  // stop()

  void start();
  void stop();  // returns once every loop finished its request in flight (bounded by the deadline)

  // One scrape of target `i` on the caller's thread, applied to the cluster. Not concurrently with
  // the running loop of the same target.
  ScrapeResult scrapeOnce(std::size_t i);
  std::size_t size() const { return targets_.size(); }

 private:
  struct Target {
    ScrapeTarget spec;
    WorkerMetricsTracker tracker;
    std::thread thread;
  };

  ScrapeOptions options_;
  LiveCluster& cluster_;
  std::vector<std::unique_ptr<Target>> targets_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<bool> running_{false};
};

}  // namespace kvscope
