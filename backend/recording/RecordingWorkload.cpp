#include "backend/recording/RecordingWorkload.h"

#include <algorithm>
#include <cmath>

#include "backend/recording/RecordingPlayer.h"
#include "core/model/Error.h"
#include "core/trace/BlockChain.h"
#include "core/trace/TraceLoader.h"

namespace kvscope {

namespace {

// A turn the recording never saw routed (the run ended first): it keeps its session's turn count, so
// the session is not over early, and never fires.
constexpr double kNever = 1e12;
// The chains built from cached tokens: 256-token blocks (reuse is reproduced to 255 tokens; a finer
// block would hold a 64-D hour's chains in gigabytes), one scope for every session, and at most
// kMaxChainIds ids in all (512 MiB): a recording that needs more is refused, not run out of memory.
constexpr std::int32_t kChainBlock = 256;
constexpr std::uint64_t kMaxChainIds = std::uint64_t{1} << 26;
constexpr std::uint64_t kRecordedScope = 0x7265636f72646564ULL;

double seconds(SimTime t) { return timeToSeconds(t); }

}  // namespace

RecordingWorkload::Seen& RecordingWorkload::at(SessionId session, std::int32_t turn) {
  return sessions_[session][turn];
}

void RecordingWorkload::onEvent(const Event& e) {
  if (const auto* r = std::get_if<RunStarted>(&e.payload)) {
    if (!have_run_) run_ = *r;
    have_run_ = true;
  } else if (const auto* d = std::get_if<RouteDecision>(&e.payload)) {
    // A repeated id (a client's retry) keeps the first routing's turn.
    if (requests_.contains(d->request)) return;
    requests_[d->request] = {d->session, d->turn};
    Seen& s = at(d->session, d->turn);
    if (d->shape.known() && !s.routed) {
      s.routed = true;
      s.shape = d->shape;
    }
    if (s.arrival < 0) s.arrival = e.time;
  } else if (const auto* done = std::get_if<RequestDone>(&e.payload)) {
    auto it = requests_.find(done->request);
    const auto [session, turn] = it != requests_.end() ? it->second : std::pair{done->session, done->turn};
    Seen& s = at(session, turn);
    if (s.done) return;
    s.done = true;
    s.end = e.time;
    s.arrival = std::max<SimTime>(0, e.time - done->e2e);
    s.slip = done->dispatch_slip;
    s.input_tokens = done->input_tokens;
    s.output_tokens = done->output_tokens;
    s.cached_tokens = done->cached_tokens;
  }
}

Workload RecordingWorkload::finish(const std::string& source) const {
  Workload w;
  w.times_final = true;
  bool chains = false;
  std::uint64_t next_id = 1;          // fresh block ids for the built chains
  std::vector<std::uint64_t> shared;  // the ids first turns share (cached tokens of a first turn)
  SimTime first_time = -1, last_time = -1;
  for (const auto& [session_id, turns] : sessions_) {
    Session s;
    s.id = session_id;
    s.source = source;
    std::vector<std::uint64_t> previous;  // the previous turn's chain
    std::int64_t previous_tokens = 0;
    SimTime start = -1, session_start = -1, previous_end = -1;
    std::int32_t session_turns = 0;
    for (const auto& [number, seen] : turns) {
      const bool shaped = seen.routed && seen.shape.prompt.input_tokens > 0;
      const std::int64_t input = seen.routed ? seen.shape.input_tokens : seen.input_tokens;
      if (input <= 0 || (!seen.routed && !seen.done)) continue;  // routed live but never reported
      Turn t;
      // Its trace time: the twin's own, else the arrival the run saw less its slip.
      const SimTime due = seen.routed && seen.shape.trace_time >= 0 ? seen.shape.trace_time
                                                                    : std::max<SimTime>(0, seen.arrival - seen.slip);
      if (start < 0) {
        start = due;
        // A first turn a start window placed starts the session at that slot.
        if (seen.routed && seen.shape.due_start >= 0) session_start = seen.shape.due_start;
      }
      t.offset_s = seconds(due - start);
      if (seen.routed && seen.shape.think >= 0)
        t.think_s = seconds(seen.shape.think);
      else
        t.think_s = previous_end >= 0 ? seconds(std::max<SimTime>(0, seen.arrival - previous_end)) : 0;
      const std::int64_t output = seen.routed && seen.shape.output_tokens >= 0
                                      ? seen.shape.output_tokens
                                      : std::max<std::int64_t>(0, seen.output_tokens);
      t.output_tokens = static_cast<std::int32_t>(std::min<std::int64_t>(output, INT32_MAX));
      if (shaped) {
        t.prompt = seen.shape.prompt;
      } else {
        // A chain that reuses what the engine reported cached: from the session's previous turn, or
        // (a first turn) from a prefix every session shares; the rest is new.
        chains = true;
        const auto blocks = static_cast<std::size_t>((input + kChainBlock - 1) / kChainBlock);
        if (next_id + blocks > kMaxChainIds)
          throw InputError(formatInputError(source, 0, "",
                                            "too much traffic without block hashes to build its prompts (over " +
                                                std::to_string(kMaxChainIds) + " blocks of " +
                                                std::to_string(kChainBlock) + " tokens)"));
        std::int64_t cached = seen.cached_tokens;
        if (cached < 0) cached = previous.empty() ? 0 : std::min(input, previous_tokens);  // unknown: the prefix
        auto reuse = static_cast<std::size_t>(std::max<std::int64_t>(0, cached) / kChainBlock);
        std::vector<std::uint64_t> ids;
        ids.reserve(blocks);
        const std::vector<std::uint64_t>& from = previous.empty() ? shared : previous;
        if (previous.empty())
          while (shared.size() < std::min(reuse, blocks)) shared.push_back(next_id++);
        reuse = std::min({reuse, blocks, from.size()});
        ids.assign(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(reuse));
        while (ids.size() < blocks) ids.push_back(next_id++);
        t.prompt.source_block_size = kChainBlock;
        t.prompt.source_hashes = ids;
        t.prompt.session_scope = kRecordedScope;
        t.prompt.unique_scope = mixHash(kRecordedScope, next_id++);
        previous = std::move(ids);
        previous_tokens = input + output;
      }
      t.prompt.input_tokens = static_cast<std::int32_t>(std::min<std::int64_t>(input, INT32_MAX));
      previous_end = seen.end;
      if (seen.routed) session_turns = std::max(session_turns, seen.shape.session_turns);
      first_time = first_time < 0 ? due : std::min(first_time, due);
      last_time = std::max(last_time, due);
      s.turns.push_back(std::move(t));
    }
    if (s.turns.empty()) continue;
    while (static_cast<std::int32_t>(s.turns.size()) < session_turns) {
      Turn never = s.turns.back();
      never.offset_s = kNever;
      never.think_s = kNever;
      s.turns.push_back(std::move(never));
    }
    s.start_s = seconds(session_start >= 0 ? session_start : start);
    w.sessions.push_back(std::move(s));
  }
  std::stable_sort(w.sessions.begin(), w.sessions.end(), [](const Session& a, const Session& b) {
    return a.start_s != b.start_s ? a.start_s < b.start_s : a.id < b.id;
  });
  // A twin run states its dispatch and what it offered; a live run is replayed at its arrivals, each
  // turn no earlier than its previous one finished (tracets).
  w.dispatch = have_run_ && !run_.dispatch.empty() ? run_.dispatch : "tracets";
  w.offered_requests =
      have_run_ && run_.offered_requests > 0 ? run_.offered_requests : static_cast<std::int64_t>(w.turnCount());
  w.trace_window_s = have_run_ && run_.offered_requests > 0
                         ? run_.trace_window_s
                         : (last_time >= first_time ? seconds(last_time - first_time) : 0);
  if (chains) w.modelled.emplace_back("prompt prefix chains built from the cached tokens the engines reported");
  return w;
}

Workload RecordingWorkload::read(const std::string& path) {
  RecordingPlayer player(path);
  player.onlyKinds({"route", "request_done"});  // what onEvent reads; a run's KV events are most of it
  RecordingWorkload builder;
  builder.onEvent(Event{0, 0, player.run()});
  player.play(builder);
  Workload w = builder.finish(path);
  if (w.turnCount() == 0)
    throw InputError(formatInputError(path, 0, "",
                                      "the recording holds no request the twin can run (no routed request with its "
                                      "size, nor a finished one)"));
  return w;
}

void RecordingWorkload::registerTraceFormat() {
  registerTraceReader(".kvrec", "a .kvrec recording (its run's own traffic)",
                      [](const std::string& path, const TraceOptions&) { return read(path); });
}

}  // namespace kvscope
