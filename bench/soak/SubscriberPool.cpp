#include "bench/soak/SubscriberPool.h"

#include <chrono>
#include <thread>

namespace kvscope::soak {

namespace {

const char* codeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    default:
      return "OTHER";
  }
}

// SubscribeRequest{from_seq: 0, kinds: [...]} by hand: two fields, no generated code needed here.
std::string subscribeRequest(const std::vector<std::string>& kinds) {
  std::string out;
  for (const auto& k : kinds) {
    out += '\x12';
    out += static_cast<char>(k.size());
    out += k;
  }
  return out;
}

}  // namespace

// One Subscribe call. The pool owns it; OnDone hands it back (the pool frees it later, never inside
// a reaction).
class SubscriberPool::Stream final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  Stream(SubscriberPool& pool, std::uint64_t id, bool silent) : pool_(pool), id_(id), silent_(silent) {}

  void start(grpc::GenericStub& stub, const std::string& method, const std::string& request) {
    grpc::Slice slice(request);
    request_ = grpc::ByteBuffer(&slice, 1);
    stub.PrepareBidiStreamingCall(&ctx_, method, grpc::StubOptions(), this);
    StartWriteLast(&request_, grpc::WriteOptions());
    if (!silent_) StartRead(&response_);
    StartCall();
  }
  void cancel() {
    churned_ = true;
    ctx_.TryCancel();
  }
  bool silent() const { return silent_; }
  bool connected() const { return connected_.load(); }
  std::uint64_t id() const { return id_; }

  void OnReadInitialMetadataDone(bool ok) override { connected_ = ok; }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    ++pool_.messages_;
    pool_.bytes_ += response_.Length();
    // TelemetryMessage: field 1 is an event, field 2 a gap; the first byte is the field's tag.
    grpc::Slice first;
    if (response_.TrySingleSlice(&first).ok() ? first.size() > 0 && first.begin()[0] == 0x12 : peekGap()) ++pool_.gaps_;
    response_.Clear();
    StartRead(&response_);
  }
  void OnWriteDone(bool) override {}
  void OnDone(const grpc::Status& status) override {
    connected_ = false;
    pool_.ended(this, status, churned_);
  }

 private:
  bool peekGap() {
    std::vector<grpc::Slice> slices;
    return response_.Dump(&slices).ok() && !slices.empty() && slices[0].size() > 0 && slices[0].begin()[0] == 0x12;
  }

  SubscriberPool& pool_;
  const std::uint64_t id_;
  const bool silent_;
  std::atomic<bool> churned_{false}, connected_{false};
  grpc::ClientContext ctx_;
  grpc::ByteBuffer request_, response_;
};

SubscriberPool::SubscriberPool(const std::string& address, int target, int silent, int connections, std::string method)
    : target_(target), silent_(silent), method_(std::move(method)) {
  // Separate connections (a channel argument unique to each), the silent streams on their own:
  // a stream that never reads stalls only its own HTTP/2 window, but should not share a socket with readers.
  const int silent_connections = silent > 0 ? std::max(1, connections / 4) : 0;
  for (int i = 0; i < connections + silent_connections; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("kvscope.soak.connection", i);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetMaxReceiveMessageSize(-1);
    if (i >= connections) {
      // A hoarder wants the slot, not the bytes: a small window (no BDP growth) fills at once, so
      // the server's stall deadline, not megabytes of buffering, decides how long it is held.
      args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
      args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 * 1024);
    }
    stubs_.push_back(std::make_unique<grpc::GenericStub>(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args)));
  }
  silent_stubs_ = static_cast<std::size_t>(silent_connections);
}

SubscriberPool::~SubscriberPool() {
  std::vector<Stream*> open;
  {
    std::lock_guard lock(mutex_);
    target_ = 0;
    for (auto& [id, s] : live_) open.push_back(s);
  }
  // Outside the lock: a cancellation may run OnDone (ended()) at once. Only this thread frees streams.
  for (Stream* s : open) s->cancel();
  for (int i = 0; i < 600; ++i) {  // up to a minute for every stream's OnDone
    {
      std::lock_guard lock(mutex_);
      if (live_.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::lock_guard lock(mutex_);
  for (Stream* s : finished_) delete s;
  finished_.clear();
}

void SubscriberPool::open(bool silent) {
  // Readers mostly take every kind (the heaviest stream); some follow a few kinds, as `tail` does.
  static const std::vector<std::vector<std::string>> kKinds = {{}, {}, {}, {}, {"eviction", "crash", "link", "knob"}};
  const auto id = next_id_++;
  auto* s = new Stream(*this, id, silent);
  live_.emplace(id, s);
  ++totals_.opened;
  const std::size_t readers = stubs_.size() - silent_stubs_;
  grpc::GenericStub& stub = silent && silent_stubs_ > 0 ? *stubs_[readers + id % silent_stubs_] : *stubs_[id % readers];
  s->start(stub, method_, method_ == kSubscribe ? subscribeRequest(kKinds[id % kKinds.size()]) : std::string());
}

void SubscriberPool::ended(Stream* s, const grpc::Status& status, bool churned) {
  std::lock_guard lock(mutex_);
  live_.erase(s->id());
  if (churned)
    ++totals_.churned;
  else
    ++totals_.ended[codeName(status.error_code())];
  finished_.push_back(s);
}

void SubscriberPool::maintain(int churn) {
  std::vector<Stream*> doomed;
  {
    std::lock_guard lock(mutex_);
    for (Stream* s : finished_) delete s;  // their OnDone has returned: ended() is its last step
    finished_.clear();
    std::vector<Stream*> open;
    // Readers come and go (consoles, `tail`); the silent ones stay until the server ends them.
    for (auto& [id, s] : live_)
      if (s->connected() && !s->silent()) open.push_back(s);
    for (int i = 0; i < churn && !open.empty(); ++i) {
      const std::size_t pick = rng_() % open.size();
      doomed.push_back(open[pick]);
      open.erase(open.begin() + static_cast<long>(pick));
    }
  }
  // Outside the lock (OnDone may run at once); the streams stay allocated until the next maintain().
  for (Stream* s : doomed) s->cancel();
  std::lock_guard lock(mutex_);
  int silent_now = 0;
  for (auto& [id, s] : live_) silent_now += s->silent();
  const int missing = target_ - static_cast<int>(live_.size());
  for (int i = 0; i < missing; ++i) open(silent_now++ < silent_);
}

SubscriberPool::Counts SubscriberPool::counts() const {
  std::lock_guard lock(mutex_);
  Counts c = totals_;
  for (auto& [id, s] : live_) {
    if (s->connected()) {
      ++c.connected;
      c.connected_silent += s->silent();
    } else {
      ++c.pending;
    }
  }
  c.messages = messages_.load();
  c.bytes = bytes_.load();
  c.gaps = gaps_.load();
  return c;
}

}  // namespace kvscope::soak
