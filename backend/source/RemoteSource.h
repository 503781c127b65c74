#pragma once
// A run served by `kvscope-cli serve` elsewhere (`kvscope --connect HOST:PORT [--token-file F]`):
// Telemetry.Subscribe feeds the staging buffer, GetState (polled about once a second) gives the
// pace and whether the run is paused, Control carries the operator's changes with the bearer token
// (its RemoteRunControl: the same RunControl vocabulary as a run in this process).
// Nothing here blocks the caller: every call uses the gRPC callback API, and one small thread of
// this source only keeps time (reconnect backoff, the GetState poll).
//
// A lost connection shows as Disconnected with the reason and "reconnecting in X s", then retries
// with exponential backoff (0.5 s doubling to 10 s, with jitter) and resumes at the last sequence
// number + 1, so the staging buffer never sees an event twice. Events the server no longer held
// arrive as a Gap and show in the status ("missed N events"). A stream that ends OK means the run
// finished: no reconnect. A server that stops answering altogether (two GetState polls in a row
// unanswered while the stream is open: a hung process, a half-open connection) counts as lost too.
// The backoff is ReconnectBackoff's; what the stream told about the run is kept by RemoteRunState.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backend/source/ReconnectBackoff.h"
#include "backend/source/RemoteRunControl.h"
#include "backend/source/RemoteRunState.h"
#include "backend/source/TelemetrySubscription.h"
#include "core/source/Source.h"
#include "kvscope/v1/control.grpc.pb.h"

namespace kvscope {

class RemoteSource final : public Source, private TelemetrySubscription::Listener {
 public:
  // `address` as gRPC takes it (HOST:PORT, [IPV6]:PORT, unix:PATH). Reads `token_file` (may be
  // empty: no token) and `root_cert_file` (TLS only; empty: the system's roots) here, and throws
  // InputError naming the file when one cannot be used.
  explicit RemoteSource(std::string address, std::string token_file = {}, bool tls = false,
                        std::string root_cert_file = {});
  ~RemoteSource() override;  // stop()

  std::string description() const override;
  // Everything but seek is offered: the server refuses what it cannot do, and the refusal reaches
  // the caller. The protocol does not say whether a run is a replay, so seek is offered until the
  // server refuses one as FAILED_PRECONDITION (a live run).
  SourceCapabilities capabilities() const override;
  RunControl* control() const override { return control_.get(); }
  void start() override;
  // Cancels the stream and every call, and returns once gRPC has finished with all of them: no
  // callback of this source runs after stop() returns. Not from inside a `done` callback (it
  // would wait for itself).
  void stop() override;
  SourceStatus status() const override;

  // Control.Preview: the server forks the run at its own current time (`change.time` is not sent).
  // A server that cannot (a replay, a live cluster) says so through `done`.
  void preview(ControlStep change, SimTime horizon, std::shared_ptr<std::atomic<bool>> cancel,
               PreviewDone done) override;

  // The from_seq of the newest Subscribe call (diagnostics, tests).
  std::uint64_t subscribedFrom() const;

 private:
  friend class RemoteRunControl;  // the Control half: its calls ride this source's connection
  struct Stubs {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::Telemetry::Stub> telemetry;
    std::unique_ptr<v1::Control::Stub> control;
  };
  using Clock = std::chrono::steady_clock;
  enum class Link { Idle, Connecting, Streaming, Backoff, Finished, Failed, Stopped };

  // TelemetrySubscription::Listener (gRPC threads).
  void onEvent(const Event& event) override;
  void onGap(std::uint64_t first_seq, std::uint64_t last_seq) override;
  void onUndecodable(std::uint64_t seq, const std::string& why) override;
  void onDone(const grpc::Status& status) override;

  void run();  // the timekeeping thread
  void subscribe(std::unique_lock<std::mutex>& lock);
  void probe(std::unique_lock<std::mutex>& lock);
  void poll(std::unique_lock<std::mutex>& lock);
  // mutex_ held. The stream delivered something: the connection works.
  void flowing();
  // mutex_ held. Disconnected for `reason`; the next attempt after the backoff.
  void scheduleReconnect(std::string reason);
  // Pause/Resume/SetSpeed/Seek results without a callback: shown in the status until the next one.
  void controlResult(const char* what, const grpc::Status& status);
  // A seek the server answered: a refusal because the run is live sticks; a replay's stream reopens.
  void seekAnswered(const grpc::Status& status);
  std::string describe(const grpc::Status& status) const;

  // One unary call on the callback API; `reply` runs exactly once (at once when not connected).
  template <class Response, class Request, class Invoke, class Reply>
  void call(Request request, bool control, Invoke invoke, Reply reply);
  // Pause waits for the run's next event boundary; GetState answers at once.
  static constexpr auto kControlDeadline = std::chrono::seconds(15);
  static constexpr auto kStateDeadline = std::chrono::seconds(5);

  const std::string address_;
  std::string authorization_;                              // "Bearer <token>", or empty
  std::shared_ptr<grpc::ChannelCredentials> credentials_;  // in clear or TLS (ClientTls.h)

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // wakes the thread and stop()
  std::shared_ptr<Stubs> stubs_;
  std::thread thread_;
  bool started_ = false;  // start() ran and stop() has not
  bool stopping_ = false;
  Link link_ = Link::Idle;
  std::string reason_;  // why the last connection ended or failed
  ReconnectBackoff backoff_;
  Clock::time_point reconnect_at_;

  std::shared_ptr<TelemetrySubscription> subscription_;  // shared: cancelled without the lock
  bool subscription_live_ = false;                       // started and its onDone not yet seen
  std::uint64_t subscribed_from_ = 0;
  std::optional<std::uint64_t> subscribe_from_;  // the thread starts a subscription from there
  bool probing_ = false;                         // GetState before resubscribing in flight
  bool polling_ = false;
  Clock::time_point next_poll_;
  int poll_failures_ = 0;    // unanswered polls in a row while the stream is open
  std::string lost_reason_;  // set when this source ends a silent stream itself
  int calls_ = 0;            // unary calls in flight
  std::map<grpc::ClientContext*, std::shared_ptr<grpc::ClientContext>> contexts_;  // to cancel on stop()

  RemoteRunState run_state_;
  std::string refusals_;       // who the server refused lately for a wrong or missing token (GetState)
  std::string control_error_;  // the last refused pause/resume/speed/seek
  std::string seek_refusal_;   // the server's FAILED_PRECONDITION for a seek: a live run
  std::unique_ptr<RemoteRunControl> control_ = std::make_unique<RemoteRunControl>(*this);
};

template <class Response, class Request, class Invoke, class Reply>
void RemoteSource::call(Request request, bool control, Invoke invoke, Reply on_reply) {
  std::function<void(const grpc::Status&, const Response&)> reply = std::move(on_reply);
  struct Call {
    grpc::ClientContext context;
    Request request;
    Response response;
  };
  auto c = std::make_shared<Call>();
  c->request = std::move(request);
  c->context.set_deadline(std::chrono::system_clock::now() + (control ? kControlDeadline : kStateDeadline));
  // Every call: the token guards Telemetry too (unless the server runs --open-telemetry).
  if (!authorization_.empty()) c->context.AddMetadata("authorization", authorization_);
  std::shared_ptr<Stubs> stubs;
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && stubs_) {
      stubs = stubs_;
      ++calls_;
      contexts_.emplace(&c->context, std::shared_ptr<grpc::ClientContext>(c, &c->context));
    }
  }
  if (!stubs) {
    reply(grpc::Status(grpc::StatusCode::UNAVAILABLE, "not connected to " + address_), c->response);
    return;
  }
  invoke(*stubs, &c->context, &c->request, &c->response,
         [this, c, reply = std::move(reply)](grpc::Status status) mutable {
           {
             std::lock_guard lock(mutex_);
             contexts_.erase(&c->context);
           }
           reply(status, c->response);
           // Everything the caller gave goes before stop() may return, on this thread.
           reply = nullptr;
           c.reset();
           std::lock_guard lock(mutex_);
           --calls_;
           changed_.notify_all();
         });
}

}  // namespace kvscope
