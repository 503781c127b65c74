#include "backend/service/TelemetryService.h"

#include <google/protobuf/io/coded_stream.h>
#include <grpcpp/alarm.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <variant>

#include "backend/convert/EventConvert.h"
#include "backend/service/CallAuthorization.h"

namespace kvscope {

namespace {

template <std::size_t... I>
std::vector<std::string> allKindNames(std::index_sequence<I...>) {
  return {eventKindName(EventPayload{std::in_place_index<I>})...};
}

class SubscribeReactor;

// Subscribers that leave free their queues, but glibc keeps the freed pages in its arenas: after
// thousands left, hundreds of MB stayed with the process. malloc_trim hands them back,
// at most once a second however many leave.
void giveMemoryBack() {
  static std::atomic<std::int64_t> last_ns{0};
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::int64_t last = last_ns.load();
  if (now - last < 1'000'000'000 || !last_ns.compare_exchange_strong(last, now)) return;
  ::malloc_trim(0);
}

// The lock around one reactor's state, shared with the hub's notify callback (which may run on
// the run's thread at any moment, also while gRPC tears the call down, so it reaches the reactor
// only through here). The run's thread never waits for it: when the lock is busy it leaves a wake
// flag, and whoever holds the lock looks at the flag after letting go.
struct SubscribeGate {
  std::mutex mutex;
  std::atomic<bool> wake{false};
  SubscribeReactor* reactor = nullptr;  // null once the call is done

  void notify() {
    wake.store(true);
    drain();
  }
  void drain();
};

class GateLock {
 public:
  explicit GateLock(SubscribeGate& gate) : gate_(gate) { gate_.mutex.lock(); }
  ~GateLock() {
    gate_.mutex.unlock();
    gate_.drain();  // a notify that found the lock busy
  }

 private:
  SubscribeGate& gate_;
};

// One Subscribe call. Owns itself (deleted in OnDone); every member is guarded by the gate.
class SubscribeReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // A call refused before it starts.
  explicit SubscribeReactor(grpc::Status error) : gate_(std::make_shared<SubscribeGate>()) {
    GateLock lock(*gate_);
    finish(std::move(error));
  }

  // `release` runs once when the call is done (the per-host slot); `context` is cancelled when a
  // write waits longer than `stalled_write` for the client to read.
  SubscribeReactor(TelemetryHub& hub, std::uint64_t from_seq, std::set<std::string> kinds,
                   grpc::CallbackServerContext* context, std::chrono::steady_clock::duration stalled_write,
                   std::function<void()> release, std::shared_ptr<std::atomic<std::uint64_t>> stalled_ended)
      : gate_(std::make_shared<SubscribeGate>()),
        context_(context),
        stalled_ended_(std::move(stalled_ended)),
        stalled_write_(stalled_write),
        release_(std::move(release)) {
    GateLock lock(*gate_);
    gate_->reactor = this;
    // Called on the run's thread with the hub lock released: start a write if none is in flight.
    sub_ = hub.subscribe(from_seq, std::move(kinds), [gate = gate_] { gate->notify(); });
    writeNext();
    armStallCheck(std::chrono::steady_clock::now() + stalled_write_);
  }

  void OnWriteDone(bool ok) override {
    GateLock lock(*gate_);
    writing_ = false;
    if (!ok)
      finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the stream broke"));  // client gone
    else
      writeNext();
    sendFinishWhenIdle();
  }

  void OnCancel() override {
    GateLock lock(*gate_);
    finish(grpc::Status::CANCELLED);  // Finish is still owed after a cancellation
  }

  void OnDone() override {
    {
      GateLock lock(*gate_);
      gate_->reactor = nullptr;  // a notify (or the stall check) from now on finds no reactor
    }
    stall_alarm_.reset();  // cancels a pending check; its callback only reaches the gate
    const bool subscribed = sub_ != nullptr;
    if (sub_) sub_->close();
    sub_.reset();
    if (release_) release_();
    delete this;
    if (subscribed) giveMemoryBack();
  }

 private:
  friend struct SubscribeGate;

  // Gate mutex held. A stream whose write has waited stalled_write_ for the client to read (its
  // window stayed full: it is not reading) is cancelled, which ends the write and frees the slot.
  // Checked by a gRPC alarm at most once per stalled_write_, not per write.
  void armStallCheck(std::chrono::steady_clock::time_point at) {
    if (!context_ || status_) return;
    const auto wall = std::chrono::system_clock::now() + (at - std::chrono::steady_clock::now());
    stall_alarm_ = std::make_unique<grpc::Alarm>();
    stall_alarm_->Set(wall, [gate = gate_](bool ok) {
      if (!ok) return;  // cancelled: the call is done
      GateLock lock(*gate);
      if (gate->reactor) gate->reactor->checkStall();
    });
  }
  void checkStall() {
    if (status_ || cancelled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (writing_ && now - write_started_ >= stalled_write_) {
      cancelled_ = true;
      if (stalled_ended_) ++*stalled_ended_;
      context_->TryCancel();
      return;
    }
    armStallCheck((writing_ ? write_started_ : now) + stalled_write_);
  }

  // Gate mutex held. One write in flight: the next item goes when the previous one is done.
  void writeNext() {
    if (writing_ || status_) return;
    TelemetryItem item;
    if (next_) {
      item = std::move(*next_);
      next_.reset();
    } else if (!sub_->pop(item)) {
      if (sub_->drained()) finish(grpc::Status::OK);
      return;
    }
    frame(item);
    // With another item already waiting, let gRPC coalesce this write with the next one instead
    // of flushing each message on its own (about twice the throughput on loopback); the last
    // write of a burst goes without the hint, so nothing waits for a flush. Never on the first
    // write: it carries the initial metadata, and a hinted one is held back (grpc/grpc#12975).
    grpc::WriteOptions options;
    if (TelemetryItem peek; started_ && sub_->pop(peek)) {
      next_ = std::move(peek);
      options.set_buffer_hint();
    }
    writing_ = started_ = true;
    write_started_ = std::chrono::steady_clock::now();
    StartWrite(&buffer_, options);
  }

  // Gate mutex held. Finish exactly once, and only with no write in flight.
  void finish(grpc::Status status) {
    if (status_) return;
    status_ = std::move(status);
    if (sub_) sub_->close();  // stop queueing for a stream that will not take more
    sendFinishWhenIdle();
  }

  void sendFinishWhenIdle() {
    if (status_ && !writing_ && !finish_sent_) {
      finish_sent_ = true;
      Finish(*status_);
    }
  }

  // The TelemetryMessage wire form around the hub's bytes: field 1 (event), length-delimited,
  // which is what the generated serialiser would produce after parsing them.
  void frame(const TelemetryItem& item) {
    if (item.gap) {
      v1::TelemetryMessage m;
      m.mutable_gap()->set_first_seq(item.first_seq);
      m.mutable_gap()->set_last_seq(item.last_seq);
      m.SerializeToString(&scratch_);
    } else {
      using google::protobuf::io::CodedOutputStream;
      std::uint8_t header[1 + 5];
      header[0] = static_cast<std::uint8_t>((v1::TelemetryMessage::kEventFieldNumber << 3) | 2);
      const std::uint8_t* end =
          CodedOutputStream::WriteVarint32ToArray(static_cast<std::uint32_t>(item.event->size()), header + 1);
      scratch_.assign(reinterpret_cast<const char*>(header), static_cast<std::size_t>(end - header));
      scratch_.append(*item.event);
    }
    grpc::Slice slice(scratch_.data(), scratch_.size());
    buffer_ = grpc::ByteBuffer(&slice, 1);
  }

  std::shared_ptr<SubscribeGate> gate_;
  grpc::CallbackServerContext* context_ = nullptr;
  std::shared_ptr<std::atomic<std::uint64_t>> stalled_ended_;  // the service's count, for GetState
  std::chrono::steady_clock::duration stalled_write_{};
  std::function<void()> release_;
  std::chrono::steady_clock::time_point write_started_{};
  bool cancelled_ = false;
  std::unique_ptr<grpc::Alarm> stall_alarm_;
  std::shared_ptr<TelemetryHub::Subscription> sub_;
  bool writing_ = false;
  bool finish_sent_ = false;
  bool started_ = false;
  std::optional<grpc::Status> status_;  // set once the stream is to end
  std::optional<TelemetryItem> next_;   // popped ahead, to know whether more is coming
  std::string scratch_;
  grpc::ByteBuffer buffer_;  // the write in flight
};

void SubscribeGate::drain() {
  // try_lock: the run's thread must not wait for a gRPC thread (which may be preempted).
  while (wake.load() && mutex.try_lock()) {
    wake.store(false);
    if (reactor) reactor->writeNext();
    mutex.unlock();
  }
}

bool parseRequest(const grpc::ByteBuffer* raw, v1::SubscribeRequest* out) {
  grpc::ByteBuffer copy(*raw);  // the reader consumes its buffer; copies share the slices
  grpc::ProtoBufferReader reader(&copy);
  return out->ParseFromZeroCopyStream(&reader);
}

}  // namespace

TelemetryService::TelemetryService(TelemetryHub& hub, const RunControl* control) : hub_(hub), control_(control) {}

const std::vector<std::string>& TelemetryService::kindNames() {
  static const std::vector<std::string> names =
      allKindNames(std::make_index_sequence<std::variant_size_v<EventPayload>>{});
  return names;
}

void TelemetryService::guard(CallAuthorization auth, Limits limits) {
  auth_ = std::move(auth);
  limits_ = limits;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TelemetryService::Subscribe(grpc::CallbackServerContext* context,
                                                                        const grpc::ByteBuffer* raw) {
  if (auto status = auth_.check(*context); !status.ok()) return new SubscribeReactor(std::move(status));
  // Each subscriber holds a queue and a thread's share of the run's fan-out: bounded, and said so.
  if (hub_.subscribers() >= limits_.max_subscribers)
    return new SubscribeReactor(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                             "too many subscribers (" + std::to_string(limits_.max_subscribers) +
                                                 "); try again later, or raise serve --max-subscribers"));
  v1::SubscribeRequest request;
  if (!parseRequest(raw, &request))
    return new SubscribeReactor(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "malformed SubscribeRequest"));
  const auto& valid = kindNames();
  std::set<std::string> kinds;
  for (const auto& k : request.kinds()) {
    if (std::find(valid.begin(), valid.end(), k) == valid.end()) {
      std::string list;
      for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
      return new SubscribeReactor(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                               "kinds: unknown event kind \"" + k + "\"; valid kinds: " + list));
    }
    kinds.insert(k);
  }
  // A sequence number no run reaches (2^64-1, ...) is a client's bug, not "from the live edge": said
  // so, rather than silently streaming from now. A number a little ahead is normal (a client
  // resuming after the server restarted) and still starts at the live edge.
  constexpr std::uint64_t kUnreachableSeq = std::uint64_t{1} << 62;
  if (request.from_seq() >= kUnreachableSeq)
    return new SubscribeReactor(grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                                             "from_seq: " + std::to_string(request.from_seq()) +
                                                 " is beyond any sequence number a run reaches (2^62); the newest is " +
                                                 std::to_string(hub_.state().last_seq)));
  // One host may not take every slot (a hoarder on the console's own machine included).
  const std::string peer = AuthFailureThrottle::peerKey(context->peer());
  {
    std::lock_guard lock(peers_->mutex);
    std::size_t& open = peers_->open[peer];
    if (open >= limits_.max_subscribers_per_peer) {
      if (open == 0) peers_->open.erase(peer);
      return new SubscribeReactor(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                               "too many subscribers from " + peer + " (" +
                                                   std::to_string(limits_.max_subscribers_per_peer) +
                                                   " per host); close one, or raise serve --max-subscribers-per-host"));
    }
    ++open;
  }
  auto release = [peers = peers_, peer] {
    std::lock_guard lock(peers->mutex);
    if (auto it = peers->open.find(peer); it != peers->open.end() && --it->second == 0) peers->open.erase(it);
  };
  return new SubscribeReactor(hub_, request.from_seq(), std::move(kinds), context, limits_.stalled_write,
                              std::move(release), stalled_ended_);
}

grpc::ServerUnaryReactor* TelemetryService::GetState(grpc::CallbackServerContext* context, const v1::GetStateRequest*,
                                                     v1::State* response) {
  if (auto status = auth_.check(*context); !status.ok()) {
    auto* refused = context->DefaultReactor();
    refused->Finish(std::move(status));
    return refused;
  }
  // Whatever the hub has: an empty State before the run starts is an answer, not an error.
  const HubState s = hub_.state();
  if (s.has_snapshot) toProto(s.snapshot, response->mutable_snapshot());
  if (s.has_run) toProto(s.run, response->mutable_run());
  // Knobs in the registry's order (as RunStarted lists them), then any the run added later.
  auto addKnob = [&](const std::string& name, double value) {
    auto* k = response->add_knobs();
    k->set_name(name);
    k->set_value(value);
  };
  auto remaining = s.knobs;
  for (const auto& [name, start_value] : s.run.knobs) {
    if (auto it = remaining.find(name); it != remaining.end()) {
      addKnob(name, it->second);
      remaining.erase(it);
    }
  }
  for (const auto& [name, value] : remaining) addKnob(name, value);
  response->set_policy(s.policy);
  response->set_last_seq(s.last_seq);
  response->set_sim_time_us(s.time);
  response->set_subscribers(static_cast<std::uint32_t>(hub_.subscribers()));
  response->set_stalled_streams_ended(stalled_ended_->load());
  for (const auto& f : refusals_.failing(5)) {
    auto* r = response->add_refused_peers();
    r->set_peer(f.peer);
    r->set_failures(static_cast<std::uint32_t>(f.failures));
    r->set_seconds_since_last(std::chrono::duration<double>(f.since_last).count());
    r->set_locked_for_s(std::chrono::duration<double>(f.locked_for).count());
  }
  if (control_) {
    response->set_paused(control_->paused());
    response->set_speed(control_->speed());
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace kvscope
