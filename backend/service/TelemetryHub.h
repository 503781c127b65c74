#pragma once
// Fans one run's event stream out to any number of telemetry subscribers without ever slowing the
// run: the run's thread serialises each event once (kvscope.v1.Event bytes, shared by every
// subscriber) into a bounded replay buffer and each subscriber's bounded queue. A subscriber whose
// queue is full loses events and is told so with one Gap{first_seq, last_seq}; it can resubscribe
// from any sequence number the replay buffer still holds. The hub also keeps the run's current
// state (metadata, latest snapshot, knob values, policy) for GetState and GetKnobs.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "core/events/Event.h"

namespace kvscope {

// A RunStarted begins the run's picture afresh: a replay publishes one after each seek, restating
// the run at the target, so it resets the snapshot and reopens a stream that had finished.
struct HubState {
  bool has_run = false;
  RunStarted run;
  std::uint64_t run_seq = 0;  // of the newest RunStarted: a coherent view starts there
  bool has_snapshot = false;
  Snapshot snapshot;
  std::map<std::string, double> knobs;  // current values (run start + every KnobChanged since)
  std::string policy;                   // current policy (run start + every PolicyChanged since)
  std::uint64_t last_seq = 0;           // of the newest event (0 with has_events == false)
  bool has_events = false;
  SimTime time = 0;       // of the newest event
  bool finished = false;  // RunFinished seen
};

// One item for a subscriber: an event (serialised kvscope.v1.Event) or a gap marker.
struct TelemetryItem {
  bool gap = false;
  std::uint64_t first_seq = 0;               // gap: the first missed sequence number
  std::uint64_t last_seq = 0;                // gap: the last missed one
  std::shared_ptr<const std::string> event;  // !gap: the serialised event
  std::uint64_t seq = 0;                     // !gap: its sequence number
};

class TelemetryHub : public EventSink {
 public:
  struct Options {
    std::size_t replay_events = 200000;    // events kept for resubscription
    std::size_t subscriber_queue = 20000;  // items a subscriber may have pending before a gap
  };

  class Subscription {
   public:
    virtual ~Subscription() = default;
    // Next pending item, if any (non-blocking). Called from the subscriber's own thread.
    virtual bool pop(TelemetryItem& out) = 0;
    // True once the run finished and every item was popped (the stream can end).
    virtual bool drained() const = 0;
    // Stop delivering; the hub forgets the subscription.
    virtual void close() = 0;
  };

  TelemetryHub();
  explicit TelemetryHub(Options options);
  ~TelemetryHub() override;

  // The run's thread. Never blocks on a subscriber. Free text over its limit is cut (EventLimits.h).
  void onEvent(const Event& event) override;

  // Items from `from_seq` on (a Gap first when older events are no longer held), filtered to
  // `kinds` (event kind names as eventKindName(); empty = all). `notify` is called (from the run's
  // thread, with no hub lock held) whenever new items become available; it must not block.
  std::shared_ptr<Subscription> subscribe(std::uint64_t from_seq, std::set<std::string> kinds,
                                          std::function<void()> notify);

  HubState state() const;
  std::size_t subscribers() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvscope
