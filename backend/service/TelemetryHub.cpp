#include "backend/service/TelemetryHub.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "backend/convert/EventConvert.h"
#include "core/events/EventLimits.h"
#include "kvscope/v1/events.pb.h"

namespace kvscope {

namespace {

// Kind filters are a bit mask over the payload variant's alternatives: the run's thread tests one
// bit per subscriber instead of comparing strings.
using KindMask = std::uint32_t;
static_assert(std::variant_size_v<EventPayload> <= 32);
constexpr KindMask kAllKinds = ~KindMask{0};

template <std::size_t... I>
KindMask maskOf(const std::string& name, std::index_sequence<I...>) {
  KindMask m = 0;
  ((m |= name == eventKindName(EventPayload{std::in_place_index<I>}) ? KindMask{1} << I : 0), ...);
  return m;
}

KindMask kindMask(const std::set<std::string>& kinds) {
  if (kinds.empty()) return kAllKinds;
  KindMask m = 0;
  for (const auto& k : kinds) m |= maskOf(k, std::make_index_sequence<std::variant_size_v<EventPayload>>{});
  return m;  // unknown names match nothing (the service rejects them before subscribing)
}

struct Held {  // one event in the replay buffer
  std::uint64_t seq;
  std::shared_ptr<const std::string> bytes;
  std::uint8_t kind;  // EventPayload::index()
};

TelemetryItem eventItem(const Held& h) {
  TelemetryItem it;
  it.event = h.bytes;
  it.seq = h.seq;
  return it;
}

TelemetryItem gapItem(std::uint64_t first, std::uint64_t last) {
  TelemetryItem it;
  it.gap = true;
  it.first_seq = first;
  it.last_seq = last;
  return it;
}

// Catching-up subscribers copy this many items from the replay buffer per hub lock.
constexpr std::size_t kCatchUpBatch = 256;
constexpr std::size_t kCatchUpScan = 8192;  // events looked at per lock (filters skip most)

}  // namespace

struct HubCore;

// Lock order: HubCore::mutex before Sub::mutex. The run's thread holds both only to append.
class Sub final : public TelemetryHub::Subscription {
 public:
  Sub(std::shared_ptr<HubCore> core, KindMask mask, std::size_t cap, std::function<void()> notify)
      : core_(std::move(core)), mask_(mask), cap_(cap), notify_(std::move(notify)) {}

  bool pop(TelemetryItem& out) override;
  bool drained() const override;
  void close() override;

  // Run's thread, hub lock held. Returns true when the consumer is idle and must be notified.
  bool push(const Held& h);
  bool wantsFinishNotice() {
    std::lock_guard lock(mutex_);
    return live_ && !closed_;
  }
  void notify() const {
    if (!closed_.load()) notify_();
  }

  mutable std::mutex mutex_;
  std::shared_ptr<HubCore> core_;
  const KindMask mask_;
  const std::size_t cap_;
  const std::function<void()> notify_;  // never reassigned: the run's thread may be calling it
  std::atomic<bool> closed_{false};
  // Catching up (live_ == false): items come from the replay buffer from `cursor_` on, copied in
  // batches into `backlog_`; the run's thread does not touch this subscriber.
  bool live_ = false;
  std::uint64_t cursor_ = 0;
  std::deque<TelemetryItem> backlog_;
  // Live: the bounded queue the run's thread appends to, and the gap not yet queued.
  std::deque<TelemetryItem> queue_;
  bool has_gap_ = false;
  std::uint64_t gap_first_ = 0, gap_last_ = 0;
  bool waiting_ = true;  // the consumer found nothing: the next push notifies it
};

struct HubCore {
  TelemetryHub::Options options;
  mutable std::mutex mutex;
  std::deque<Held> ring;
  HubState state;
  std::atomic<bool> finished{false};
  std::vector<std::shared_ptr<Sub>> subs;

  // Fills `sub`'s backlog from the replay buffer; goes live once it reached the newest event.
  // Both locks held.
  void catchUp(Sub& sub) {
    const std::uint64_t oldest = ring.empty() ? state.last_seq + 1 : ring.front().seq;
    if (sub.cursor_ < oldest) {
      sub.backlog_.push_back(gapItem(sub.cursor_, oldest - 1));
      sub.cursor_ = oldest;
    }
    auto it = std::lower_bound(ring.begin(), ring.end(), sub.cursor_,
                               [](const Held& h, std::uint64_t s) { return h.seq < s; });
    // Bounded work per call: the run's thread waits for this lock.
    std::size_t copied = 0, scanned = 0;
    for (; it != ring.end() && copied < kCatchUpBatch && scanned < kCatchUpScan; ++it, ++scanned) {
      sub.cursor_ = it->seq + 1;
      if (sub.mask_ & (KindMask{1} << it->kind)) {
        sub.backlog_.push_back(eventItem(*it));
        ++copied;
      }
    }
    if (it == ring.end()) sub.live_ = true;  // the next event reaches it through push()
  }

  void updateState(const Event& e) {
    state.has_events = true;
    state.last_seq = e.seq;
    state.time = e.time;
    if (const auto* r = std::get_if<RunStarted>(&e.payload)) {
      state.has_run = true;
      state.run = *r;
      state.run_seq = e.seq;
      state.has_snapshot = false;
      state.snapshot = {};
      state.finished = false;
      state.knobs.clear();
      for (const auto& [name, value] : r->knobs) state.knobs[name] = value;
      state.policy = r->policy;
    } else if (const auto* k = std::get_if<KnobChanged>(&e.payload)) {
      state.knobs[k->name] = k->new_value;
    } else if (const auto* p = std::get_if<PolicyChanged>(&e.payload)) {
      state.policy = p->new_policy;
    } else if (const auto* s = std::get_if<Snapshot>(&e.payload)) {
      state.has_snapshot = true;
      state.snapshot = *s;
    } else if (std::holds_alternative<RunFinished>(e.payload)) {
      state.finished = true;  // `finished` (for drained()) only once the event is queued
    }
  }
};

bool Sub::push(const Held& h) {
  std::lock_guard lock(mutex_);
  if (!live_ || closed_ || !(mask_ & (KindMask{1} << h.kind))) return false;
  if (queue_.size() >= cap_) {
    // Full: this subscriber loses the event and will be told so by one Gap.
    if (!has_gap_) gap_first_ = h.seq;
    gap_last_ = h.seq;
    has_gap_ = true;
    return false;
  }
  queue_.push_back(eventItem(h));
  return std::exchange(waiting_, false);
}

bool Sub::pop(TelemetryItem& out) {
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return false;
      if (!backlog_.empty()) {
        out = std::move(backlog_.front());
        backlog_.pop_front();
        return true;
      }
      if (live_) {
        if (queue_.empty()) {
          waiting_ = true;
          return false;
        }
        out = std::move(queue_.front());
        queue_.pop_front();
        if (has_gap_) {  // room again: the gap goes before anything newer
          queue_.push_back(gapItem(gap_first_, gap_last_));
          has_gap_ = false;
        }
        return true;
      }
    }
    std::scoped_lock lock(core_->mutex, mutex_);
    if (closed_) return false;
    core_->catchUp(*this);  // then pop from the new backlog, or from the queue once live
  }
}

bool Sub::drained() const {
  if (!core_->finished.load()) return false;
  std::lock_guard lock(mutex_);
  return live_ && backlog_.empty() && queue_.empty() && !has_gap_;
}

void Sub::close() {
  std::scoped_lock lock(core_->mutex, mutex_);
  if (closed_) return;
  closed_ = true;
  auto& subs = core_->subs;
  subs.erase(std::remove_if(subs.begin(), subs.end(), [this](const auto& s) { return s.get() == this; }), subs.end());
  backlog_.clear();
  queue_.clear();
}

struct TelemetryHub::Impl {
  std::shared_ptr<HubCore> core = std::make_shared<HubCore>();
  v1::Event scratch;                            // reused by the run's thread: its buffers stay allocated
  std::vector<std::shared_ptr<Sub>> to_notify;  // run's thread only
};

TelemetryHub::TelemetryHub() : TelemetryHub(Options{}) {}

TelemetryHub::TelemetryHub(Options options) : impl_(std::make_unique<Impl>()) { impl_->core->options = options; }

TelemetryHub::~TelemetryHub() {
  // Subscriptions may outlive the hub (they share HubCore); they just stop receiving.
  auto& core = *impl_->core;
  std::lock_guard lock(core.mutex);
  for (auto& s : core.subs) {
    std::lock_guard sub_lock(s->mutex_);
    s->closed_ = true;
  }
  core.subs.clear();
}

void TelemetryHub::onEvent(const Event& event) {
  // No event a subscriber cannot receive: text from outside (a log's traceback, a recording's frame)
  // is cut to its limit here, whatever path it came by. A copy only for the rare event that needs it.
  std::optional<Event> capped;
  if (exceedsTextLimits(event.payload)) {
    capped = event;
    capEventText(capped->payload);
  }
  const Event& e = capped ? *capped : event;
  // Serialise once, outside the lock: every subscriber and the replay buffer share these bytes.
  toProto(e, &impl_->scratch);
  auto bytes = std::make_shared<std::string>();
  impl_->scratch.SerializeToString(bytes.get());
  const Held held{e.seq, std::move(bytes), static_cast<std::uint8_t>(e.payload.index())};

  auto& core = *impl_->core;
  auto& to_notify = impl_->to_notify;
  {
    std::lock_guard lock(core.mutex);
    core.updateState(e);
    if (core.options.replay_events > 0) {
      core.ring.push_back(held);
      while (core.ring.size() > core.options.replay_events) core.ring.pop_front();
    }
    const bool finished = std::holds_alternative<RunFinished>(e.payload);
    for (auto& s : core.subs) {
      // After RunFinished every live consumer must look again: drained() may have become true
      // even when the event itself was filtered out.
      if (s->push(held) || (finished && s->wantsFinishNotice())) to_notify.push_back(s);
    }
    // After the pushes: a consumer that sees `finished` also sees RunFinished in its queue.
    if (finished) core.finished = true;
    // A replay sought back after its end: streams opened from now on follow it again.
    if (std::holds_alternative<RunStarted>(e.payload)) core.finished = false;
  }
  for (auto& s : to_notify) s->notify();  // without the hub lock: a consumer may pop right away
  to_notify.clear();
}

std::shared_ptr<TelemetryHub::Subscription> TelemetryHub::subscribe(std::uint64_t from_seq, std::set<std::string> kinds,
                                                                    std::function<void()> notify) {
  auto& core = *impl_->core;
  auto sub = std::make_shared<Sub>(impl_->core, kindMask(kinds),
                                   std::max<std::size_t>(1, core.options.subscriber_queue), std::move(notify));
  std::lock_guard lock(core.mutex);
  if (!core.state.has_events || from_seq > core.state.last_seq) {
    sub->live_ = true;  // nothing held from there yet: it starts with the next event
  } else {
    sub->cursor_ = from_seq;  // pop() copies from the replay buffer until it reaches the newest
  }
  core.subs.push_back(sub);
  return sub;
}

HubState TelemetryHub::state() const {
  std::lock_guard lock(impl_->core->mutex);
  return impl_->core->state;
}

std::size_t TelemetryHub::subscribers() const {
  std::lock_guard lock(impl_->core->mutex);
  return impl_->core->subs.size();
}

}  // namespace kvscope
