#include "core/run/MarkedRunSplitter.h"

#include <algorithm>

#include "core/run/RunMarkBook.h"

namespace kvscope {

MarkedRunSplitter::MarkedRunSplitter(Hooks hooks) : hooks_(std::move(hooks)) {}

void MarkedRunSplitter::forward(SimTime session_time, EventPayload payload) {
  Event e{run_seq_++, std::max<SimTime>(0, session_time - run_t0_), std::move(payload)};
  analysis_->onEvent(e);
  if (sink_) sink_->onEvent(e);
}

void MarkedRunSplitter::openRun(const Event& marker, const RunMarked& start) {
  open_start_ = start;
  run_t0_ = marker.time;
  run_seq_ = 0;
  analysis_.emplace();
  sink_ = hooks_.opened ? hooks_.opened(start) : nullptr;
  RunStarted header = session_;
  header.scenario = start.name;
  forward(marker.time, std::move(header));
  if (snapshot_) forward(marker.time, *snapshot_);
  forward(marker.time, start);
}

void MarkedRunSplitter::closeRun(const Event& marker, const RunMarked& end, bool completed) {
  forward(marker.time, end);
  forward(marker.time, RunFinished{completed});
  MarkedRun run;
  run.start = *open_start_;
  run.ended_by = end.who;
  run.session_start = run_t0_;
  run.session_end = marker.time;
  run.summary = analysis_->summary();
  open_start_.reset();
  analysis_.reset();
  sink_ = nullptr;
  if (hooks_.closed) hooks_.closed(run);
}

void MarkedRunSplitter::onEvent(const Event& e) {
  if (const auto* m = std::get_if<RunMarked>(&e.payload)) {
    if (m->action == RunMarkAction::Start) {
      if (open_start_) closeRun(e, runEnd(*open_start_, ChangeAuthor(m->who, m->origin)), true);
      openRun(e, *m);
    } else if (open_start_ && open_start_->index == m->index) {
      closeRun(e, *m, m->who != kRunEndedBySession);
    }
    return;
  }
  if (const auto* r = std::get_if<RunStarted>(&e.payload)) {
    // A new session (or a replay's restatement after a seek) begins: a run open before it is over.
    if (open_start_) closeRun(e, runEnd(*open_start_, kRunEndedBySession), false);
    session_ = *r;
    snapshot_.reset();
    return;
  }
  if (const auto* k = std::get_if<KnobChanged>(&e.payload)) {
    auto it =
        std::find_if(session_.knobs.begin(), session_.knobs.end(), [&](const auto& kv) { return kv.first == k->name; });
    if (it != session_.knobs.end())
      it->second = k->new_value;
    else
      session_.knobs.emplace_back(k->name, k->new_value);
  } else if (const auto* p = std::get_if<PolicyChanged>(&e.payload)) {
    session_.policy = p->new_policy;
  } else if (const auto* s = std::get_if<Snapshot>(&e.payload)) {
    snapshot_ = *s;
  }
  if (std::holds_alternative<RunFinished>(e.payload)) {
    if (open_start_) closeRun(e, runEnd(*open_start_, kRunEndedBySession), false);
    return;
  }
  if (open_start_) forward(e.time, e.payload);
}

}  // namespace kvscope
