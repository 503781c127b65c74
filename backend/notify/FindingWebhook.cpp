#include "backend/notify/FindingWebhook.h"

#include <httplib.h>

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/diagnosis/FindingJson.h"
#include "core/model/NumberText.h"

namespace kvscope {

namespace {
// The findings' identity across checks: the same mode on the same workers is the same finding
// (its window and evidence grow as it holds).
std::string keyOf(const Finding& f) {
  std::string key = f.mode;
  for (const std::string& s : f.subjects) key += '\n' + s;
  return key;
}

// Where scheme://host[:port] ends and the path begins (npos: no path).
std::size_t originEnd(const std::string& url) {
  const auto scheme_end = url.find("://");
  return scheme_end == std::string::npos ? std::string::npos : url.find('/', scheme_end + 3);
}

std::string textOf(const Finding& f, const std::string& source, bool resolved) {
  std::string text = "KVScope";
  if (!source.empty()) text += " (" + source + ")";
  text += resolved ? ": resolved " : ": ";
  text += f.mode + (f.subjects.empty() ? "" : " - " + f.subjectsText()) + " " + f.name + ", " +
          formatNumber("%.1f", f.window_start_s) + " - " + formatNumber("%.1f", f.window_end_s) + " s";
  if (!resolved && !f.suggestion.empty()) text += ". " + f.suggestion;
  return text;
}
}  // namespace

std::optional<std::string> FindingWebhook::urlRefusal(const std::string& url) {
  const auto scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  const std::string origin = url.substr(0, originEnd(url));
  if ((scheme == "http" || scheme == "https") && origin.size() > scheme.size() + 3 &&
      origin.find_first_of(" \t\r\n@") == std::string::npos)
    return std::nullopt;
  return "--notify-webhook: expected an http://HOST[:PORT][/PATH] or https://... URL, got '" + url + "'";
}

std::unique_ptr<FindingWebhook> FindingWebhook::start(Options options, Log warn, std::string* why) {
  if (auto refused = urlRefusal(options.url)) {
    *why = *refused;
    return nullptr;
  }
  const std::string& url = options.url;
  const std::size_t origin_end = originEnd(url);
  std::string origin = url.substr(0, origin_end);
  std::string path = origin_end == std::string::npos ? "/" : url.substr(origin_end);
  return std::unique_ptr<FindingWebhook>(
      new FindingWebhook(std::move(options), std::move(origin), std::move(path), std::move(warn)));
}

FindingWebhook::FindingWebhook(Options options, std::string origin, std::string path, Log warn)
    : options_(std::move(options)), origin_(std::move(origin)), path_(std::move(path)), warn_(std::move(warn)) {
  thread_ = std::thread([this] { postLoop(); });
}

FindingWebhook::~FindingWebhook() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FindingWebhook::onEvent(const Event& e) {
  if (const auto* started = std::get_if<RunStarted>(&e.payload)) {
    source_ = started->scenario;
    known_.clear();  // a new run (or a replay sought back): its findings are new to whoever listens
    resolved_since_.clear();
    next_check_s_ = 0;
  }
  engine_.onEvent(e);
  const double t = timeToSeconds(e.time);
  last_event_s_ = t;
  if (std::holds_alternative<RunFinished>(e.payload) || t >= next_check_s_) {
    check(t, std::holds_alternative<RunFinished>(e.payload));
    next_check_s_ = t + 1;
  }
}

// A finding that stops holding is posted as resolved once it has stayed so for kResolvedHoldS of
// stream time: an evict storm that pauses for two seconds between bursts is one finding, not a
// post every burst. At the end (final) what is resolved is posted at once.
void FindingWebhook::check(double stream_time_s, bool final) {
  for (const Finding& f : engine_.findings()) {
    const std::string key = keyOf(f);
    const auto seen = known_.find(key);
    if (seen == known_.end()) {  // new (perhaps over already: it is still news)
      known_[key] = f.resolved;
      post(f, "finding", stream_time_s);
      continue;
    }
    if (!f.resolved) {  // holding; again, if its resolution was posted: that is news too
      resolved_since_.erase(key);
      if (seen->second) {
        seen->second = false;
        post(f, "finding", stream_time_s);
      }
      continue;
    }
    if (seen->second) continue;  // resolved, and said so
    const double since = resolved_since_.try_emplace(key, stream_time_s).first->second;
    if (!final && stream_time_s - since < kResolvedHoldS) continue;
    seen->second = true;
    resolved_since_.erase(key);
    post(f, "resolved", stream_time_s);
  }
}

void FindingWebhook::post(const Finding& f, const char* what, double stream_time_s) {
  const bool resolved = std::string_view(what) == "resolved";
  nlohmann::json body{{"kvscope", what},
                      {"source", source_},
                      {"stream_time_s", stream_time_s},
                      {"text", textOf(f, source_, resolved)},
                      {"finding", findingJson(f)}};
  // A worker's name from a cluster file or a log may be any bytes: replaced, never a throw.
  enqueue(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void FindingWebhook::enqueue(std::string body) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.max_queued) {
      queue_.pop_front();
      ++counts_.dropped;
    }
    queue_.push_back(std::move(body));
  }
  wake_.notify_all();
}

void FindingWebhook::close(std::chrono::milliseconds deadline) {
  check(last_event_s_, true);
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, deadline, [this] { return queue_.empty() && !posting_; });
  if (!queue_.empty() || posting_)
    warn_("--notify-webhook " + options_.url + ": " + std::to_string(queue_.size() + (posting_ ? 1 : 0)) +
          " findings not posted by exit");
}

FindingWebhook::Counts FindingWebhook::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void FindingWebhook::postLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const std::string body = std::move(queue_.front());
    queue_.pop_front();
    posting_ = true;
    std::string why;
    bool ok = false, retry = true;
    for (int attempt = 0; attempt < options_.attempts && !ok && retry && !stopping_; ++attempt) {
      if (attempt > 0 && wake_.wait_for(lock, std::chrono::seconds(attempt), [this] { return stopping_; })) break;
      lock.unlock();
      ok = send(body, &why, &retry);
      lock.lock();
    }
    posting_ = false;
    ++(ok ? counts_.posted : counts_.failed);
    if (!ok && !stopping_) {
      lock.unlock();
      warn_("--notify-webhook " + options_.url + ": a finding was not posted: " + why);
      lock.lock();
    }
    wake_.notify_all();  // close() waits for the queue to drain
  }
}

// One POST; true for a 2xx answer. A 4xx is the endpoint refusing this body: trying again cannot
// help (`retry` false); no answer or a 5xx may pass.
bool FindingWebhook::send(const std::string& body, std::string* why, bool* retry) {
  httplib::Client client(origin_);
  client.set_connection_timeout(options_.timeout);
  client.set_read_timeout(options_.timeout);
  client.set_write_timeout(options_.timeout);
  client.set_keep_alive(false);
  const auto result = client.Post(path_, body, "application/json");
  *retry = true;
  if (!result) {
    *why = httplib::to_string(result.error());
    return false;
  }
  if (result->status >= 200 && result->status < 300) return true;
  *why = "HTTP " + std::to_string(result->status);
  *retry = result->status >= 500;
  return false;
}

}  // namespace kvscope
