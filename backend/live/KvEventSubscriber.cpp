#include "backend/live/KvEventSubscriber.h"

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <array>
#include <optional>
#include <vector>

#include "core/live/KvEventDecoder.h"

namespace kvscope {

namespace {

constexpr std::uint64_t kEndOfReplay = ~std::uint64_t{0};  // upstream's END_SEQ: -1 as 8 bytes

std::uint64_t bigEndian(const zmq::message_t& m) {
  std::uint64_t v = 0;
  const auto* p = static_cast<const unsigned char*>(m.data());
  for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

std::string bigEndianBytes(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

// Reachability from ZMQ's own view of the connection (the SUB socket never fails on its own).
class Monitor final : public zmq::monitor_t {
 public:
  explicit Monitor(std::function<void(bool, const std::string&)> report, std::string address)
      : report_(std::move(report)), address_(std::move(address)) {}
  bool reconnected = false;  // connected again after a disconnect: the publisher may be a new process
  bool connected() const { return last_.value_or(false); }
  void on_event_connected(const zmq_event_t&, const char*) override {
    if (last_ && !*last_) reconnected = true;
    say(true, "");
  }
  void on_event_connect_retried(const zmq_event_t&, const char*) override {
    say(false,
        "no publisher answers at " + address_ + " (connection refused or unreachable); retrying, up to every 10 s");
  }
  void on_event_disconnected(const zmq_event_t&, const char*) override {
    say(false, "the publisher at " + address_ + " closed the connection; retrying");
  }

 private:
  void say(bool reachable, const std::string& why) {
    if (last_ && *last_ == reachable && why == last_why_) return;
    last_ = reachable;
    last_why_ = why;
    if (report_) report_(reachable, why);
  }
  std::function<void(bool, const std::string&)> report_;
  std::string address_;
  std::optional<bool> last_;
  std::string last_why_;
};

}  // namespace

KvEventSubscriber::KvEventSubscriber(Endpoint endpoint, Listener listener)
    : KvEventSubscriber(std::move(endpoint), std::move(listener), Options{}) {}

KvEventSubscriber::KvEventSubscriber(Endpoint endpoint, Listener listener, Options options)
    : endpoint_(std::move(endpoint)), listener_(std::move(listener)), options_(options) {}

KvEventSubscriber::~KvEventSubscriber() { stop(); }

void KvEventSubscriber::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void KvEventSubscriber::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

KvEventSubscriber::Counts KvEventSubscriber::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

// The thread's sockets (the PUB subscription and its monitor), the next sequence number expected,
// and the three things done with them: deliver a batch, report a gap, ask the replay socket.
class KvEventSubscriber::Session {
 public:
  explicit Session(KvEventSubscriber& owner);
  void run();

 private:
  template <class F>
  void count(F&& f) {
    std::lock_guard lock(owner_.mutex_);
    f(owner_.counts_);
  }
  void deliver(std::uint64_t seq, const zmq::message_t& payload);
  void lost(std::uint64_t first, std::uint64_t last, const std::string& why);
  std::uint64_t replayFrom(std::uint64_t from, std::uint64_t until, bool attaching);
  void onBatch(std::vector<zmq::message_t>& frames);

  KvEventSubscriber& owner_;
  const Endpoint& endpoint_;
  const Listener& listener_;
  zmq::context_t context_{1};
  zmq::socket_t sub_;
  Monitor monitor_;
  const bool replay_;
  std::optional<std::uint64_t> expected_;  // the next sequence number; unset until the first batch
};

KvEventSubscriber::Session::Session(KvEventSubscriber& owner)
    : owner_(owner),
      endpoint_(owner.endpoint_),
      listener_(owner.listener_),
      sub_(context_, zmq::socket_type::sub),
      monitor_(owner.listener_.health, owner.endpoint_.publisher),
      replay_(!owner.endpoint_.replay.empty()) {
  sub_.set(zmq::sockopt::linger, 0);
  sub_.set(zmq::sockopt::reconnect_ivl, 500);
  sub_.set(zmq::sockopt::reconnect_ivl_max, 10000);
  sub_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(KvEventDecoder::kMaxPayloadBytes + 4096));
  sub_.set(zmq::sockopt::subscribe, endpoint_.topic);
  static std::atomic<int> monitors{0};
  monitor_.init(sub_, "inproc://kvscope-kv-events-monitor-" + std::to_string(monitors++),
                ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_DISCONNECTED);
  sub_.connect(endpoint_.publisher);
}

void KvEventSubscriber::Session::deliver(std::uint64_t seq, const zmq::message_t& payload) {
  std::string why;
  auto batch = KvEventDecoder::decode(static_cast<const char*>(payload.data()), payload.size(), &why);
  expected_ = seq + 1;
  if (!batch) {
    count([](Counts& c) { ++c.undecodable; });
    if (listener_.undecodable) listener_.undecodable(seq, why);
    return;
  }
  count([](Counts& c) { ++c.batches; });
  if (listener_.batch) listener_.batch(seq, std::move(*batch));
}

void KvEventSubscriber::Session::lost(std::uint64_t first, std::uint64_t last, const std::string& why) {
  count([&](Counts& c) { c.lost += last - first + 1; });
  if (listener_.gap) listener_.gap(first, last, why);
}

// Asks the replay socket for `from` onwards and delivers, in order, what comes before `until`
// (exclusive; kEndOfReplay = no bound). Returns the next sequence number still missing.
// A socket of its own per request: the replies (and the end marker) of an earlier request that
// ran out of time can never be taken for this one's. The timeout is an idle one: a long replay
// that keeps answering runs to its end.
std::uint64_t KvEventSubscriber::Session::replayFrom(std::uint64_t from, std::uint64_t until, bool attaching) {
  std::uint64_t next = from;
  if (!replay_) return next;
  zmq::socket_t dealer(context_, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(KvEventDecoder::kMaxPayloadBytes + 4096));
  dealer.connect(endpoint_.replay);
  const std::string start = bigEndianBytes(from);
  std::array<zmq::const_buffer, 2> request{zmq::buffer(std::string_view()), zmq::buffer(start)};
  if (!zmq::send_multipart(dealer, request, zmq::send_flags::dontwait)) return next;
  auto deadline = std::chrono::steady_clock::now() + owner_.options_.replay_timeout;
  while (!owner_.stop_) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::min(left, std::chrono::milliseconds(100)));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(dealer, std::back_inserter(frames), zmq::recv_flags::dontwait)) continue;
    deadline = std::chrono::steady_clock::now() + owner_.options_.replay_timeout;
    // ["", seq, payload] (the ROUTER's identity frame is stripped on the way to a DEALER).
    if (frames.size() != 3 || frames[1].size() != 8) {
      count([](Counts& c) { ++c.malformed_frames; });
      continue;
    }
    const std::uint64_t seq = bigEndian(frames[1]);
    if (seq == kEndOfReplay) return next;
    if (seq < next || seq >= until) continue;   // already had it, or the live stream will bring it
    if (attaching && next == from) next = seq;  // history older than the buffer is not a gap
    if (seq > next) lost(next, seq - 1, "the publisher's replay buffer no longer holds them");
    count([](Counts& c) { ++c.replayed; });
    deliver(seq, frames[2]);
    next = seq + 1;
  }
  return next;
}

// A message from the PUB socket: a restart, a duplicate, or a batch (after what replay can give of
// the ones it reveals missing).
void KvEventSubscriber::Session::onBatch(std::vector<zmq::message_t>& frames) {
  if (frames.size() != 3 || frames[1].size() != 8) {  // [topic, seq, payload] or it is not a batch
    count([](Counts& c) { ++c.malformed_frames; });
    return;
  }
  const std::uint64_t seq = bigEndian(frames[1]);
  // Below where we are, after a reconnect or from 0: a restarted publisher, not a duplicate
  // (upstream numbers every publisher from 0 and keeps no epoch on the wire).
  if (expected_ && seq < *expected_ && (monitor_.reconnected || (seq == 0 && *expected_ > 1))) {
    count([](Counts& c) { ++c.restarts; });
    if (listener_.restarted) listener_.restarted();
    expected_.reset();
  }
  monitor_.reconnected = false;
  if (expected_ && seq < *expected_) {
    count([](Counts& c) { ++c.duplicates; });
    return;
  }
  if (!expected_ && seq > 0 && replay_) {
    // Attaching mid-stream: learn what the publisher still holds, then go on live.
    expected_ = replayFrom(0, seq, /*attaching=*/true);
  } else if (expected_ && seq > *expected_) {
    const std::uint64_t next = replayFrom(*expected_, seq, false);
    if (next < seq)
      lost(next, seq - 1,
           replay_ ? "replay did not return them (the publisher's buffer moved on, or it did not answer in time)"
                   : "missed, and the endpoint has no replay socket");
  }
  deliver(seq, frames[2]);
}

void KvEventSubscriber::Session::run() {
  // After a second with nothing on the PUB socket, ask the replay socket for what is newer than the
  // last batch: what a PUB socket drops (before our subscription reaches it, past its high-water
  // mark) would otherwise wait for the next batch to reveal the jump, and the tail of a quiet
  // stream for ever. Once a second at most, and only while connected. A replay socket that does not
  // answer holds the loop for replay_timeout each time (live batches wait in ZMQ's queue meanwhile).
  constexpr auto kIdleProbe = std::chrono::seconds(1);
  auto last_heard = std::chrono::steady_clock::now();
  bool connected = false;
  while (!owner_.stop_) {
    while (monitor_.check_event(0)) {}
    if (monitor_.connected() != connected) {
      connected = monitor_.connected();
      last_heard = std::chrono::steady_clock::now();
    }
    zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (!(item.revents & ZMQ_POLLIN)) {
      // Not after a reconnect once we have a position: a restarted publisher would answer from its
      // new start, below `expected_`, and only a live batch tells a restart from a duplicate.
      const bool may_probe = !monitor_.reconnected || !expected_;
      if (replay_ && connected && may_probe && std::chrono::steady_clock::now() - last_heard >= kIdleProbe) {
        replayFrom(expected_.value_or(0), kEndOfReplay, /*attaching=*/!expected_);  // deliver() moves `expected_`
        last_heard = std::chrono::steady_clock::now();
      }
      continue;
    }
    last_heard = std::chrono::steady_clock::now();
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(sub_, std::back_inserter(frames), zmq::recv_flags::dontwait)) continue;
    onBatch(frames);
  }
}

void KvEventSubscriber::run() { Session(*this).run(); }

}  // namespace kvscope
