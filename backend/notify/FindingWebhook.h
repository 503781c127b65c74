#pragma once
// Posts the diagnosis's findings as JSON to a URL (`serve --notify-webhook`): a headless sweep on
// the head node tells a chat channel or a pager when a failure mode appears, and again when it
// has stopped holding for 30 s of stream time (or the run ended). The diagnosis is the console's
// own (DiagnosisEngine, fed the served events), checked once per second of stream time. Posting
// runs on a thread of its own: a slow or dead endpoint never holds the run back; what it cannot
// take is retried, then logged and dropped.
//
// The body: {"kvscope": "finding" | "resolved", "source": scenario or cluster, "stream_time_s": t,
// "text": one line for chat webhooks (Slack, Mattermost read "text"), "finding": findingJson(f)}.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/diagnosis/DiagnosisEngine.h"
#include "core/events/Event.h"

namespace kvscope {

class FindingWebhook : public EventSink {
 public:
  struct Options {
    std::string url;                          // http:// or https://HOST[:PORT][/PATH]
    std::chrono::milliseconds timeout{5000};  // connect, send and answer, each
    int attempts = 3;                         // a post that fails (no answer, 5xx) is tried again, 1 s then 2 s later
    std::size_t max_queued = 256;             // posts waiting past this are dropped, oldest first, and counted
  };
  using Log = std::function<void(const std::string& line)>;

  // Null, with `why`, for a URL that is not http(s)://HOST[:PORT][/PATH]; `warn` hears each post
  // that failed for good (from the posting thread).
  static std::unique_ptr<FindingWebhook> start(Options options, Log warn, std::string* why);
  // Why `url` cannot be a webhook's (a usage error, found before anything runs), or nothing.
  static std::optional<std::string> urlRefusal(const std::string& url);
  ~FindingWebhook() override;

  void onEvent(const Event& e) override;
  // The findings as they stand now, posted when new or newly resolved; then waits up to `deadline`
  // for the posts still queued (a run's last findings reach the endpoint before serve exits).
  void close(std::chrono::milliseconds deadline);

  struct Counts {
    std::size_t posted = 0, failed = 0, dropped = 0;
  };
  Counts counts() const;

 private:
  FindingWebhook(Options options, std::string origin, std::string path, Log warn);
  static constexpr double kResolvedHoldS = 30;
  void check(double stream_time_s, bool final);
  void post(const Finding& f, const char* what, double stream_time_s);
  void enqueue(std::string body);
  void postLoop();
  bool send(const std::string& body, std::string* why, bool* retry);

  const Options options_;
  const std::string origin_, path_;
  const Log warn_;
  DiagnosisEngine engine_;
  std::string source_;
  double next_check_s_ = 0, last_event_s_ = 0;
  std::map<std::string, bool> known_;             // each finding's key (mode and subjects): posted as resolved?
  std::map<std::string, double> resolved_since_;  // resolved, not posted yet: since when (stream time)

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  bool stopping_ = false, posting_ = false;
  Counts counts_;
  std::thread thread_;
};

}  // namespace kvscope
