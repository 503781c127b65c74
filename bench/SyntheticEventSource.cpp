#include "bench/SyntheticEventSource.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <queue>

namespace kvscope::bench {

namespace {

constexpr std::int64_t kKvCapacity = 1'200'000;  // tokens per decode worker
constexpr double kRho = 0.95;

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// xoshiro256** (fast enough that the producer never limits the GUI).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return uniform() < p; }
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> s_{};
};

}  // namespace

class SyntheticEventSource::Generator {
 public:
  Generator(double events_per_sim_second, std::uint64_t seed, int decode, int prefill)
      : rng_(seed),
        decode_(decode),
        prefill_(prefill),
        workers_(static_cast<std::size_t>(decode)),
        links_(static_cast<std::size_t>(decode * prefill)) {
    // Events per request: route + admission + done (3); sessions average 7 turns, so about one in
    // seven requests is seeded (seed, transfer start and end); a few percent evict; plus one snapshot
    // per simulated second. Close enough: the benchmark prints the simulated pace it got.
    const double per_request = 3.0 + 3.0 / 7.0 + 0.05;
    const double requests_per_s = std::max(1.0, (events_per_sim_second - 1.0) / per_request);
    mean_gap_us_ = 1e6 / requests_per_s;
    next_arrival_ = static_cast<SimTime>(rng_.exponential(mean_gap_us_));
    for (int w = 0; w < decode_; ++w) {
      workers_[w].kv_used = rng_.between(kKvCapacity / 4, kKvCapacity / 2);
      workers_[w].kv_peak = workers_[w].kv_used;
    }
    sessions_.resize(6000);
    for (Session& s : sessions_) newSession(s);
  }

  SimTime time() const { return t_; }
  const KindCounts& kinds() const { return kinds_; }

  // Appends at least `n` events (a step may emit a few more).
  void generate(std::vector<Event>& out, std::size_t n) {
    const std::size_t target = out.size() + n;
    if (!started_) {
      started_ = true;
      emit(out, 0, runStarted());
    }
    while (out.size() < target) {
      const SimTime pending = pending_.empty() ? INT64_MAX : pending_.top().time;
      if (next_snapshot_ <= pending && next_snapshot_ <= next_arrival_) {
        emit(out, next_snapshot_, snapshot());
        next_snapshot_ += 1'000'000;
        maybeLinkOrKnob(out, t_);
      } else if (pending <= next_arrival_) {
        Pending p = pending_.top();
        pending_.pop();
        finish(out, p);
      } else {
        arrival(out, next_arrival_);
        next_arrival_ += std::max<SimTime>(1, static_cast<SimTime>(rng_.exponential(mean_gap_us_)));
      }
    }
  }

 private:
  struct Worker {
    std::int64_t kv_used = 0, kv_peak = 0;
    std::int32_t running = 0, resident = 0, bindings = 0, pending_seeds = 0;
  };
  struct Link {  // P -> D, at links_[p * decode_ + d]
    std::int32_t queue_depth = 0;
    std::int64_t bytes_in_flight = 0;
    LinkState state = LinkState::Alive;
  };
  Link& link(int p, int d) {
    return links_[static_cast<std::size_t>(p) * static_cast<std::size_t>(decode_) + static_cast<std::size_t>(d)];
  }
  struct Session {
    SessionId id = 0;
    std::int32_t turn = 0, turns = 0;
    WorkerId worker = kNoWorker;
    std::int64_t context = 0;
  };
  struct Pending {
    SimTime time;
    EventPayload payload;
    bool operator<(const Pending& o) const { return time > o.time; }  // min-heap on time
  };

  void emit(std::vector<Event>& out, SimTime time, EventPayload payload) {
    t_ = std::max(t_, time);
    ++kinds_[payload.index()];
    out.push_back(Event{seq_++, t_, std::move(payload)});
  }

  void newSession(Session& s) {
    s.id = next_session_++;
    s.turn = 0;
    s.turns = static_cast<std::int32_t>(rng_.between(2, 12));
    s.worker = kNoWorker;
    s.context = 0;
  }

  RunStarted runStarted() const {
    RunStarted r;
    r.scenario = "synthetic-bench";
    r.policy = "kv-aware";
    r.seed = 42;
    r.profile = "h200";
    for (int w = 0; w < decode_; ++w) r.workers.push_back({"D" + std::to_string(w), WorkerRole::Decode, kKvCapacity});
    for (int p = 0; p < prefill_; ++p) r.prefill.push_back({"P" + std::to_string(p), WorkerRole::Prefill, kKvCapacity});
    r.rho = kRho;
    r.knobs = {{"K", 0}, {"sticky_bonus", 100}, {"epsilon", 100}, {"rho", kRho}, {"seed_min_turn_id", 1}};
    return r;
  }

  Snapshot snapshot() {
    Snapshot s;
    s.workers.reserve(static_cast<std::size_t>(decode_));
    s.links.reserve(links_.size());
    for (int w = 0; w < decode_; ++w) {
      Worker& x = workers_[w];
      WorkerGauges g;
      g.worker = w;
      g.kv_used = x.kv_used;
      g.kv_capacity = kKvCapacity;
      g.kv_peak = x.kv_peak;
      g.running = x.running;
      g.queued = static_cast<std::int32_t>(std::max<std::int64_t>(0, x.running - 120));
      g.resident_sessions = x.resident;
      g.bindings = x.bindings;
      g.pending_seeds = x.pending_seeds;
      g.alive = true;
      s.workers.push_back(g);
      x.kv_peak = x.kv_used;
    }
    for (int p = 0; p < prefill_; ++p)
      for (int w = 0; w < decode_; ++w) {
        const Link& l = link(p, w);
        s.links.push_back({p, w, l.queue_depth, l.bytes_in_flight, l.state});
      }
    return s;
  }

  void maybeLinkOrKnob(std::vector<Event>& out, SimTime t) {
    const SimTime second = t / 1'000'000;
    if (second % 25 == 7) {  // a link goes suspect, recovers 1-3 s later; sometimes dead
      const WorkerId w = static_cast<WorkerId>(rng_.between(0, decode_ - 1));
      const WorkerId p = static_cast<WorkerId>(rng_.between(0, prefill_ - 1));
      const bool dead = second % 200 == 107;
      LinkHealth h{p, w, dead ? LinkState::Dead : LinkState::Suspect,
                   dead ? "handshake timeout: D did not preallocate within 3 s" : "transfer slow: 2 requests over 1 s",
                   dead ? static_cast<std::int32_t>(rng_.between(1, 12)) : 0};
      link(p, w).state = h.state;
      emit(out, t, std::move(h));
      pending_.push(
          {t + rng_.between(1'000'000, dead ? 6'000'000 : 3'000'000), LinkHealth{p, w, LinkState::Alive, "", 0}});
    }
    if (second % 90 == 45) {
      const double old_k = k_;
      k_ = k_ == 0 ? 200 : 0;
      emit(out, t, KnobChanged{"K", old_k, k_, "bench", {}});
    }
  }

  void arrival(std::vector<Event>& out, SimTime t) {
    Session& s = sessions_[static_cast<std::size_t>(rng_.between(0, static_cast<std::int64_t>(sessions_.size()) - 1))];
    if (s.turn >= s.turns) {
      if (s.worker != kNoWorker) {
        --workers_[s.worker].bindings;
        --workers_[s.worker].resident;
      }
      newSession(s);
    }
    ++s.turn;
    const RequestId request = next_request_++;
    const std::int64_t input = s.context + rng_.between(200, 4000);
    const std::int64_t output = rng_.between(50, 1500);

    // The decision: kv-aware with overlap, stickiness, the load-floor bonus and the assignment.
    RouteDecision d;
    d.request = request;
    d.session = s.id;
    d.turn = s.turn;
    d.policy = "kv-aware";
    d.candidates.reserve(static_cast<std::size_t>(decode_));
    const int p = static_cast<int>(request % static_cast<RequestId>(prefill_));  // round-robin prefill
    double mean_bound = 0;
    for (const Worker& x : workers_) mean_bound += x.bindings;
    mean_bound /= decode_;
    double best = -1e300;
    for (int w = 0; w < decode_; ++w) {
      const Worker& x = workers_[w];
      CandidateScore c;
      c.worker = w;
      const double overlap = w == s.worker ? static_cast<double>(s.context) : rng_.uniform(0, 512);
      const double sticky = w == s.worker ? 100.0 : 0.0;
      const double floor = s.turn == 1 ? k_ * std::max(0.0, mean_bound - x.bindings) / std::max(1.0, mean_bound) : 0.0;
      c.add("overlap", overlap);
      c.add("sticky", sticky);
      c.add("floor_bonus", floor);
      c.add("assigned", x.bindings);
      c.score = overlap / 64.0 + sticky + floor - 0.01 * x.running + rng_.uniform(0, 1);
      c.eligible = link(p, w).state != LinkState::Dead;
      if (c.eligible && c.score > best) {
        best = c.score;
        d.chosen = w;
      }
      d.candidates.push_back(c);
    }
    if (d.chosen == kNoWorker) d.chosen = 0;
    const WorkerId w = d.chosen;
    Worker& x = workers_[w];
    const bool moved = s.worker != kNoWorker && s.worker != w;
    emit(out, t, std::move(d));

    // Admission: the path follows the binding; a full pool says no space now and then.
    Admission a;
    a.request = request;
    a.session = s.id;
    a.worker = w;
    a.path = s.worker == kNoWorker ? RoutePath::Seed : moved ? RoutePath::Reseed : RoutePath::Direct;
    a.tokens = a.path == RoutePath::Direct ? input - s.context + output : input + output;
    const bool full = static_cast<double>(x.kv_used + a.tokens) > kRho * static_cast<double>(kKvCapacity);
    a.result = full && rng_.chance(0.3) ? AdmissionResult::NoSpace
               : rng_.chance(0.003)     ? AdmissionResult::Rejected
                                        : AdmissionResult::Admitted;
    const RoutePath path = a.path;
    const AdmissionResult result = a.result;
    const std::int64_t tokens = a.tokens;
    emit(out, t, a);

    if (result != AdmissionResult::Admitted) {
      RequestDone done;
      done.request = request;
      done.session = s.id;
      done.turn = s.turn;
      done.worker = w;
      done.path = path;
      done.status = RequestStatus::Failed;
      done.ttft = -1;
      done.e2e = rng_.between(1'000, 50'000);
      done.input_tokens = input;
      done.error = result == AdmissionResult::NoSpace ? "no space on " + std::to_string(w) : "rejected by admission";
      pending_.push({t + done.e2e, std::move(done)});
      return;
    }

    // Evict before allocating when the pool is over its pressure line (session or block granularity).
    while (static_cast<double>(x.kv_used + tokens) > 0.92 * static_cast<double>(kKvCapacity)) {
      Eviction ev;
      ev.worker = w;
      ev.granularity = rng_.chance(0.8) ? EvictionGranularity::Session : EvictionGranularity::Block;
      ev.session = ev.granularity == EvictionGranularity::Session ? next_session_ - rng_.between(1, 5000) : 0;
      ev.tokens_freed = rng_.between(20'000, 120'000);
      ev.sessions_hit =
          ev.granularity == EvictionGranularity::Session ? 1 : static_cast<std::int32_t>(rng_.between(2, 9));
      x.kv_used = std::max<std::int64_t>(0, x.kv_used - ev.tokens_freed);
      x.resident = std::max(0, x.resident - ev.sessions_hit);
      emit(out, t, ev);
    }
    x.kv_used += tokens;
    x.kv_peak = std::max(x.kv_peak, x.kv_used);
    ++x.running;

    if (path != RoutePath::Direct) {
      if (moved) {
        --workers_[s.worker].bindings;
        --workers_[s.worker].resident;
      }
      ++x.bindings;
      ++x.resident;
      s.worker = w;
      ++x.pending_seeds;
      Link& l = link(p, w);
      ++l.queue_depth;
      const std::int64_t bytes = input * 160 * 1024;  // ~160 KiB of KV per token (70B-class model, fp8)
      l.bytes_in_flight += bytes;
      emit(out, t, SeedStarted{request, s.id, p, w, input, path == RoutePath::Reseed});
      const SimTime wait = rng_.between(0, 20'000);
      emit(out, t, TransferStarted{request, p, w, input, bytes, wait});
      const bool ok = !rng_.chance(0.004);
      pending_.push(
          {t + wait + rng_.between(30'000, 400'000),
           TransferFinished{request, p, w, input, bytes, ok, ok ? "" : "transfer aborted: link marked dead"}});
    }
    s.context = input + output;

    RequestDone done;
    done.request = request;
    done.session = s.id;
    done.turn = s.turn;
    done.worker = w;
    done.path = path;
    done.ttft = rng_.between(60'000, 1'500'000);
    done.e2e = done.ttft + output * rng_.between(8'000, 25'000);
    done.input_tokens = input;
    done.output_tokens = output;
    if (rng_.chance(0.005)) {
      done.status = RequestStatus::Failed;
      done.error = "request timed out after 300 s";
    }
    pending_.push({t + done.e2e, std::move(done)});
  }

  void finish(std::vector<Event>& out, Pending& p) {
    if (auto* tf = std::get_if<TransferFinished>(&p.payload)) {
      Worker& x = workers_[tf->worker];
      x.pending_seeds = std::max(0, x.pending_seeds - 1);
      Link& l = link(tf->prefill, tf->worker);
      l.queue_depth = std::max(0, l.queue_depth - 1);
      l.bytes_in_flight = std::max<std::int64_t>(0, l.bytes_in_flight - tf->bytes);
    } else if (auto* done = std::get_if<RequestDone>(&p.payload)) {
      if (done->status == RequestStatus::Ok || done->ttft >= 0) {
        Worker& x = workers_[done->worker];
        x.running = std::max(0, x.running - 1);
      }
    } else if (auto* h = std::get_if<LinkHealth>(&p.payload)) {
      link(h->prefill, h->worker).state = h->state;
    }
    emit(out, p.time, std::move(p.payload));
  }

  Rng rng_;
  double mean_gap_us_ = 1000;
  bool started_ = false;
  std::uint64_t seq_ = 1;
  SimTime t_ = 0, next_arrival_ = 0, next_snapshot_ = 1'000'000;
  int decode_, prefill_;
  std::vector<Worker> workers_;
  std::vector<Link> links_;
  std::vector<Session> sessions_;
  SessionId next_session_ = 1;
  RequestId next_request_ = 1;
  double k_ = 0;
  std::priority_queue<Pending> pending_;
  KindCounts kinds_{};
};

SyntheticEventSource::SyntheticEventSource(Options options)
    : options_(options),
      gen_(std::make_unique<Generator>(options.events_per_sim_second, options.seed,
                                       std::clamp(options.decode, 1, kMaxWorkers),
                                       std::clamp(options.prefill, 1, kMaxPrefillWorkers))),
      rate_(options.rate) {}

SyntheticEventSource::~SyntheticEventSource() { stop(); }

void SyntheticEventSource::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void SyntheticEventSource::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

SourceStatus SyntheticEventSource::status() const {
  SourceStatus s;
  s.state = thread_.joinable() && !stop_ ? SourceState::Running : SourceState::Finished;
  s.time = sim_time_.load(std::memory_order_relaxed);
  const double rate = rate_.load(std::memory_order_relaxed);
  s.speed = rate > 0 ? rate / options_.events_per_sim_second : 0;
  s.detail = rate > 0 ? std::to_string(static_cast<long>(rate)) + " events/s" : "as fast as possible";
  return s;
}

SyntheticEventSource::KindCounts SyntheticEventSource::kindCounts() const {
  std::lock_guard lock(pushes_mutex_);
  return kinds_;
}

void SyntheticEventSource::setRate(double events_per_second) { rate_.store(events_per_second); }

void SyntheticEventSource::takePushes(std::deque<Push>& into) {
  std::lock_guard lock(pushes_mutex_);
  for (const Push& p : pushes_) into.push_back(p);
  pushes_.clear();
}

void SyntheticEventSource::fillStore(const Options& options, SimTime until, TelemetryStore& store) {
  Generator gen(options.events_per_sim_second, options.seed, options.decode, options.prefill);
  std::vector<Event> batch;
  while (gen.time() < until) {
    batch.clear();
    gen.generate(batch, 10'000);
    store.ingest(batch);
  }
}

void SyntheticEventSource::run() {
  using Clock = std::chrono::steady_clock;
  std::vector<Event> batch;
  double rate = -1;  // forces a new baseline on the first pass
  Clock::time_point base_time;
  std::uint64_t base_count = 0;
  Clock::time_point next_tick = Clock::now();
  auto publish = [&] {
    if (batch.empty()) return;
    const std::uint64_t last = batch.back().seq;
    const auto count = static_cast<std::uint32_t>(batch.size());
    produced_.fetch_add(batch.size(), std::memory_order_relaxed);
    sim_time_.store(gen_->time(), std::memory_order_relaxed);
    staging_.append(std::move(batch));
    const std::int64_t at = nowNs();
    {
      std::lock_guard lock(pushes_mutex_);
      kinds_ = gen_->kinds();
      pushes_.push_back({at, last, count});
    }
    batch = {};
  };
  while (!stop_.load(std::memory_order_relaxed)) {
    const double want = rate_.load(std::memory_order_relaxed);
    if (want != rate) {
      rate = want;
      base_time = Clock::now();
      base_count = produced_.load(std::memory_order_relaxed);
      next_tick = base_time;
    }
    if (rate > 0) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - base_time).count();
      const auto target = base_count + static_cast<std::uint64_t>(rate * elapsed);
      const std::uint64_t done = produced_.load(std::memory_order_relaxed);
      if (target > done) {
        gen_->generate(batch, target - done);
        publish();
      }
      next_tick += options_.batch_interval;
      const auto now = Clock::now();
      if (next_tick < now) next_tick = now;  // behind (a busy machine): catch up by the rate, not by ticks
      std::this_thread::sleep_until(next_tick);
    } else {
      const std::uint64_t backlog = produced_.load(std::memory_order_relaxed) -
                                    std::min(acked_.load(std::memory_order_relaxed), produced_.load());
      if (backlog >= options_.max_backlog) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        continue;
      }
      gen_->generate(batch, std::min<std::size_t>(5'000, options_.max_backlog - backlog));
      publish();
    }
  }
}

}  // namespace kvscope::bench
