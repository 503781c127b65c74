#include "backend/source/RemoteSource.h"

#include "core/model/NumberText.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend/convert/PreviewConvert.h"
#include "backend/service/BearerToken.h"
#include "backend/source/ClientTls.h"
#include "core/events/EventLimits.h"
#include "core/model/Error.h"

namespace kvscope {

namespace {

constexpr auto kPollInterval = std::chrono::seconds(1);
constexpr int kUnansweredPolls = 2;  // GetState polls in a row without an answer: the server is gone

std::string readWhole(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) throw InputError(std::string(what) + " '" + path + "': cannot read it");
  return text.str();
}

// The token exactly as the server compares it. BearerToken checks the file (and says what is wrong
// with it) but keeps the secret to itself, so it is read once more here, trimmed the same way.
std::string authorizationFrom(const std::string& token_file) {
  if (token_file.empty()) return {};
  std::string error;
  if (!BearerToken::fromFile(token_file, &error)) throw InputError("--token-file: " + error);
  std::string text = readWhole(token_file, "token file");
  const auto first = text.find_first_not_of(" \t\n\r\v\f");
  const auto last = text.find_last_not_of(" \t\n\r\v\f");
  std::string header = "Bearer " + text.substr(first, last - first + 1);
  std::fill(text.begin(), text.end(), '\0');
  return header;
}

// "the server refused 12 calls (wrong or missing token) from 10.0.0.7, 3 s ago, locked out for 8 s;
// 2 from loopback, 40 s ago": the origin of refused calls, as GetState reports it ("" for none).
std::string refusalText(const v1::State& state) {
  std::string out;
  for (const auto& r : state.refused_peers()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%u%s from %s, %.0f s ago", out.empty() ? "the server refused " : "; ",
                  r.failures(), out.empty() ? " calls (wrong or missing token)" : "", r.peer().substr(0, 64).c_str(),
                  r.seconds_since_last());
    out += buf;
    if (r.locked_for_s() > 0)
      out += ", locked out for " + std::to_string(static_cast<long>(std::ceil(r.locked_for_s()))) + " s";
  }
  return printableText(out);
}

}  // namespace

RemoteSource::RemoteSource(std::string address, std::string token_file, bool tls, std::string root_cert_file)
    : address_(std::move(address)),
      authorization_(authorizationFrom(token_file)),
      credentials_(channelCredentials(ClientTls{tls, std::move(root_cert_file)})) {}

RemoteSource::~RemoteSource() { stop(); }

std::string RemoteSource::description() const { return "server " + address_; }

SourceCapabilities RemoteSource::capabilities() const {
  std::lock_guard lock(mutex_);
  return {true, true, seek_refusal_.empty(), true, true};
}

void RemoteSource::start() {
  std::lock_guard lock(mutex_);
  if (started_) return;
  started_ = true;
  grpc::ChannelArguments args;
  // The channel's own reconnect backoff stays below ours, so ours decides when a retry happens
  // (gRPC's default grows to two minutes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 250);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // Above any event the server sends (EventLimits.h), with room for GetState's whole-run reply.
  args.SetMaxReceiveMessageSize(static_cast<int>(kClientReceiveLimitBytes));
  auto stubs = std::make_shared<Stubs>();
  stubs->channel = grpc::CreateCustomChannel(address_, credentials_, args);
  stubs->telemetry = v1::Telemetry::NewStub(stubs->channel);
  stubs->control = v1::Control::NewStub(stubs->channel);
  stubs_ = std::move(stubs);
  stopping_ = false;
  link_ = Link::Connecting;
  reason_.clear();
  backoff_.reset();
  // Resume after a stop() where the stream left off; a first start takes the run from its beginning.
  subscribe_from_ = run_state_.resumeFrom();
  thread_ = std::thread([this] { run(); });
}

void RemoteSource::stop() {
  std::unique_lock lock(mutex_);
  if (!started_) return;
  stopping_ = true;  // from here on no call starts and no subscription is replaced
  changed_.notify_all();
  lock.unlock();
  thread_.join();
  lock.lock();
  auto subscription = subscription_live_ ? subscription_ : nullptr;
  std::vector<std::shared_ptr<grpc::ClientContext>> contexts;
  for (const auto& [raw, context] : contexts_) contexts.push_back(context);
  // Cancelled without the lock: gRPC may run the reactions (which take it) inside TryCancel.
  lock.unlock();
  if (subscription) subscription->cancel();
  for (const auto& context : contexts) context->TryCancel();
  subscription.reset();
  contexts.clear();
  lock.lock();
  changed_.wait(lock, [&] { return !subscription_live_ && calls_ == 0; });
  subscription_.reset();
  stubs_.reset();
  started_ = false;
  if (link_ != Link::Finished && link_ != Link::Failed) link_ = Link::Stopped;
  probing_ = polling_ = false;
  subscribe_from_.reset();
}

std::uint64_t RemoteSource::subscribedFrom() const {
  std::lock_guard lock(mutex_);
  return subscribed_from_;
}

SourceStatus RemoteSource::status() const {
  std::lock_guard lock(mutex_);
  SourceStatus s;
  s.time = run_state_.time();
  s.speed = run_state_.speed();
  s.end = 0;  // State carries no end time; the run's end is known only when RunFinished arrives
  s.worker_health = run_state_.workerHealth();
  switch (link_) {
    case Link::Idle:
      s.state = SourceState::Starting;
      break;
    case Link::Connecting:
      s.state = SourceState::Connecting;
      s.detail = (run_state_.hasPosition() ? "reconnecting to " : "connecting to ") + address_;
      if (!reason_.empty()) s.detail += " (last error: " + reason_ + ")";
      break;
    case Link::Streaming:
      s.state = run_state_.paused() ? SourceState::Paused : SourceState::Running;
      break;
    case Link::Backoff: {
      s.state = SourceState::Disconnected;
      const double left = std::chrono::duration<double>(reconnect_at_ - Clock::now()).count();
      s.detail = reason_ + "; reconnecting in " + secondsText(std::max(0.0, left), 1);
      break;
    }
    case Link::Finished:
      s.state = SourceState::Finished;
      s.detail = run_state_.finished() ? "" : "the server ended the stream before the run's end";
      break;
    case Link::Failed:
      s.state = SourceState::Failed;
      s.detail = reason_;
      break;
    case Link::Stopped:
      s.state = SourceState::Disconnected;
      s.detail = "disconnected";
      break;
  }
  auto note = [&](const std::string& text) {
    if (!text.empty()) s.detail += (s.detail.empty() ? "" : "; ") + text;
  };
  for (const auto& text : run_state_.notes()) note(text);
  note(refusals_);
  note(control_error_);
  return s;
}

// ---- The stream ----------------------------------------------------------------------------------

void RemoteSource::flowing() {
  if (link_ != Link::Connecting) return;
  link_ = Link::Streaming;
  backoff_.reset();
  reason_.clear();
}

void RemoteSource::onEvent(const Event& event) {
  {
    std::lock_guard lock(mutex_);
    flowing();
    // The server resumes at from_seq, so this only guards the staging buffer's promise.
    if (!run_state_.apply(event)) return;
  }
  staging_.onEvent(event);
}

void RemoteSource::onGap(std::uint64_t first_seq, std::uint64_t last_seq) {
  std::lock_guard lock(mutex_);
  flowing();
  run_state_.gap(first_seq, last_seq);
}

void RemoteSource::onUndecodable(std::uint64_t seq, const std::string& why) {
  std::lock_guard lock(mutex_);
  flowing();
  run_state_.undecodable(seq, why);
}

void RemoteSource::onDone(const grpc::Status& status) {
  std::lock_guard lock(mutex_);
  subscription_live_ = false;
  std::string lost = std::move(lost_reason_);
  lost_reason_.clear();
  if (!stopping_) {
    if (!status.ok() && !lost.empty()) {
      scheduleReconnect(std::move(lost));  // we cancelled it: the server stopped answering
    } else if (status.ok()) {
      link_ = Link::Finished;  // the server ends a stream with OK only once the run finished
    } else if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED ||
               status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      link_ = Link::Failed;  // not a kvscope server, or one that will never take this request
      reason_ = describe(status);
    } else {
      scheduleReconnect(describe(status));
    }
  }
  changed_.notify_all();  // last: stop() may destroy the subscription and this source from here on
}

void RemoteSource::scheduleReconnect(std::string reason) {
  const double delay = backoff_.next();
  reconnect_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
  link_ = Link::Backoff;
  reason_ = std::move(reason);
  probing_ = false;
  changed_.notify_all();
}

std::string RemoteSource::describe(const grpc::Status& status) const {
  const std::string message = status.error_message().empty() ? "no message" : status.error_message();
  return "server " + address_ + ": " + message + " (gRPC code " + std::to_string(status.error_code()) + ")";
}

// ---- The timekeeping thread ------------------------------------------------------------------------

void RemoteSource::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto now = Clock::now();
    if (link_ == Link::Backoff && now >= reconnect_at_) {
      link_ = Link::Connecting;
      // Ask first whether the server still runs the run we followed (it may have been restarted).
      if (run_state_.hasPosition())
        probe(lock);
      else
        subscribe_from_ = 0;
      continue;
    }
    if (subscribe_from_) {
      subscribe(lock);
      continue;
    }
    if (subscription_live_ && !polling_ && now >= next_poll_) {
      poll(lock);
      continue;
    }
    auto until = Clock::time_point::max();
    if (link_ == Link::Backoff) until = reconnect_at_;
    if (subscription_live_ && !polling_) until = std::min(until, next_poll_);
    if (until == Clock::time_point::max())
      changed_.wait(lock);
    else
      changed_.wait_until(lock, until);
  }
}

void RemoteSource::subscribe(std::unique_lock<std::mutex>& lock) {
  const std::uint64_t from = *subscribe_from_;
  subscribe_from_.reset();
  auto previous = std::move(subscription_);  // its onDone has run: nothing of it is in use
  Listener& listener = *this;                // a private base: converted here, where it is accessible
  subscription_ = std::make_shared<TelemetrySubscription>(*stubs_->telemetry, from, listener, authorization_);
  subscription_live_ = true;
  subscribed_from_ = from;
  poll_failures_ = 0;
  next_poll_ = Clock::now();  // the pace and pause state at once
  auto subscription = subscription_;
  lock.unlock();
  previous.reset();
  subscription->start();
  lock.lock();
}

void RemoteSource::probe(std::unique_lock<std::mutex>& lock) {
  probing_ = true;
  lock.unlock();
  call<v1::State>(
      v1::GetStateRequest{}, false,
      [](Stubs& s, grpc::ClientContext* c, const v1::GetStateRequest* q, v1::State* r, auto done) {
        s.telemetry->async()->GetState(c, q, r, std::move(done));
      },
      [this](const grpc::Status& status, const v1::State& state) {
        std::lock_guard lock(mutex_);
        if (stopping_ || !probing_) return;
        probing_ = false;
        if (!status.ok()) return scheduleReconnect(describe(status));
        run_state_.resync(state);
        subscribe_from_ = run_state_.resumeFrom();
        changed_.notify_all();
      });
  lock.lock();
}

void RemoteSource::poll(std::unique_lock<std::mutex>& lock) {
  polling_ = true;
  next_poll_ = Clock::now() + kPollInterval;
  lock.unlock();
  call<v1::State>(
      v1::GetStateRequest{}, false,
      [](Stubs& s, grpc::ClientContext* c, const v1::GetStateRequest* q, v1::State* r, auto done) {
        s.telemetry->async()->GetState(c, q, r, std::move(done));
      },
      [this](const grpc::Status& status, const v1::State& state) {
        std::shared_ptr<TelemetrySubscription> silent;
        {
          std::lock_guard lock(mutex_);
          polling_ = false;
          changed_.notify_all();
          if (stopping_) return;
          if (status.ok()) {
            poll_failures_ = 0;
            refusals_ = refusalText(state);
            run_state_.setPace(state.paused(), state.speed());
            // Reachable, and a paused run sends nothing: connected even before the first message.
            if (subscription_live_) flowing();
            return;
          }
          // A server that stopped answering (a hung process, a half-open connection) never ends
          // the stream on its own: end it, and let onDone reconnect.
          const bool unanswered = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                                  status.error_code() == grpc::StatusCode::UNAVAILABLE;
          if (unanswered && subscription_live_ && ++poll_failures_ >= kUnansweredPolls) {
            lost_reason_ = describe(status);
            silent = subscription_;
          }
        }
        if (silent) silent->cancel();  // without the lock: the reaction may run inside
      });
  lock.lock();
}

// ---- Control -------------------------------------------------------------------------------------

void RemoteSource::controlResult(const char* what, const grpc::Status& status) {
  std::lock_guard lock(mutex_);
  control_error_ = status.ok() ? "" : std::string(what) + " refused: " + status.error_message();
}

void RemoteSource::seekAnswered(const grpc::Status& status) {
  controlResult("seek", status);
  std::lock_guard lock(mutex_);
  if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) seek_refusal_ = status.error_message();
  // A replay's stream reopens after a seek, also once it had finished: follow it again.
  if (status.ok() && link_ == Link::Finished && !subscription_live_ && !stopping_) {
    link_ = Link::Connecting;
    subscribe_from_ = run_state_.resumeFrom();
    changed_.notify_all();
  }
}

void RemoteSource::preview(ControlStep change, SimTime horizon, std::shared_ptr<std::atomic<bool>> cancel,
                           PreviewDone done) {
  v1::PreviewRequest request;
  for (const auto& [name, value] : change.knobs) {
    auto* knob = request.add_changes();
    knob->set_name(name);
    knob->set_value(value);
  }
  if (change.policy) request.set_policy(*change.policy);
  request.set_horizon_s(timeToSeconds(horizon));
  request.set_who(consoleAuthor());
  call<v1::PreviewResponse>(
      std::move(request), true,
      [](Stubs& s, grpc::ClientContext* c, const v1::PreviewRequest* q, v1::PreviewResponse* r, auto cb) {
        s.control->async()->Preview(c, q, r, std::move(cb));
      },
      [cancel = std::move(cancel), done = std::move(done)](const grpc::Status& status,
                                                           const v1::PreviewResponse& response) {
        if (cancel && cancel->load()) return;  // a newer pending value asked for another one
        if (!status.ok()) return done(nullptr, status.error_message());
        auto result = std::make_shared<WhatIfResult>();
        std::string error;
        if (!fromProto(response, result.get(), &error))
          return done(nullptr, "the server's preview is malformed: " + error);
        done(std::move(result), {});
      });
}

}  // namespace kvscope
