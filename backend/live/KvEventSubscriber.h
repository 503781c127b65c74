#pragma once
// One engine endpoint's KV cache events (vLLM --kv-events-config, SGLang --kv-events-config), read
// as the engines publish them (vllm/distributed/kv_events.py, sglang/srt/disaggregation/
// kv_events.py: ZmqEventPublisher): a PUB socket sending [topic, seq (8 bytes, big-endian),
// msgpack payload], and an optional ROUTER socket that, sent a start sequence number, answers with
// every batch it still holds from there, then an end marker (seq -1).
//
// Sequence numbers: a duplicate (seq below the next expected) is dropped; a jump asks the replay
// socket for the missing ones and delivers them in order before the batch that revealed the jump;
// what replay cannot give (no replay socket, the publisher's buffer moved on, no answer in time) is
// reported as a gap, never skipped silently. On attach the subscriber asks for replay from 0, so it
// starts from as much history as the publisher holds (what is older is not a gap: it was before us).
// After a second with nothing on the PUB socket it asks the replay socket for anything newer, so a
// batch the PUB socket dropped at the tail of a quiet stream is not left waiting for the next one.
// Reachability comes from ZMQ's socket monitor: connected, or retrying (ZMQ reconnects with backoff
// from 0.5 s up to 10 s) with the reason. A publisher that comes back numbering from below where it
// was (after a reconnect, or from 0) is a restarted engine: said, and followed from its new start. Everything runs on
// one thread of its own; the listener's callbacks are called there, in order.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/live/KvEventBatch.h"

namespace kvscope {

class KvEventSubscriber {
 public:
  struct Endpoint {
    std::string publisher;  // "tcp://10.0.0.1:5557": the engine's PUB socket
    std::string replay;     // "tcp://10.0.0.1:5558": its ROUTER replay socket; "" when it has none
    std::string topic;      // prefix filter; "" = every message
  };
  struct Options {
    std::chrono::milliseconds replay_timeout{2000};  // the most the replay socket may stay silent before its end marker
  };
  struct Listener {
    std::function<void(std::uint64_t seq, KvEventBatch batch)> batch;
    // Batches first..last that will never arrive, and why.
    std::function<void(std::uint64_t first, std::uint64_t last, const std::string& why)> gap;
    std::function<void(bool reachable, const std::string& why)> health;
    std::function<void(std::uint64_t seq, const std::string& why)> undecodable;
    // The publisher started over (an engine restart: its sequence numbers begin again after a
    // reconnect): what it held before is gone, and batches are followed from its new start.
    std::function<void()> restarted;
  };
  struct Counts {
    std::uint64_t batches = 0, duplicates = 0, replayed = 0, lost = 0, undecodable = 0, malformed_frames = 0,
                  restarts = 0;
  };

  KvEventSubscriber(Endpoint endpoint, Listener listener);
  KvEventSubscriber(Endpoint endpoint, Listener listener, Options options);
  ~KvEventSubscriber();  // stop()
  void start();
  void stop();  // joins the thread; idempotent
  Counts counts() const;

 private:
  class Session;  // one run of the thread: its sockets and its place in the sequence (KvEventSubscriber.cpp)
  void run();

  const Endpoint endpoint_;
  const Listener listener_;
  const Options options_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  Counts counts_;
};

}  // namespace kvscope
