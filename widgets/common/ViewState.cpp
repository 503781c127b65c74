#include "widgets/common/ViewState.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kvscope {

void ViewState::set(SimTime from, SimTime to) {
  if (to <= from) to = from + 1;
  if (from == from_ && to == to_) return;
  from_ = from;
  to_ = to;
  emit rangeChanged(from_, to_);
}

void ViewState::advanceLive(SimTime now) {
  if (!follow_live_) return;
  set(std::max<SimTime>(0, now - live_window_), std::max(now, live_window_) + lookahead_);
}

void ViewState::setRange(SimTime from, SimTime to) {
  remember();
  setFollowLive(false);
  set(from, to);
}

namespace {
constexpr std::int64_t kGestureGapMs = 600;  // changes closer than this are one gesture, one undo
constexpr std::size_t kUndoSteps = 50;
std::int64_t steadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void ViewState::remember() {
  const std::int64_t now = steadyMs();
  const bool same_gesture = !follow_live_ && last_remembered_ms_ >= 0 && now - last_remembered_ms_ < kGestureGapMs;
  last_remembered_ms_ = now;
  if (same_gesture) return;
  history_.push_back({from_, to_, follow_live_});
  if (history_.size() > kUndoSteps) history_.erase(history_.begin());
}

bool ViewState::undoRange() {
  if (history_.empty()) return false;
  const Stop stop = history_.back();
  history_.pop_back();
  last_remembered_ms_ = -1;
  if (stop.follow) {
    setFollowLive(true);
    return true;
  }
  setFollowLive(false);
  set(stop.from, stop.to);
  return true;
}

void ViewState::zoomAbout(SimTime anchor, double notches) {
  if (notches == 0 || !std::isfinite(notches)) return;
  const SimTime span = to_ - from_;
  anchor = std::clamp(anchor, from_, to_);
  const auto width = std::clamp(static_cast<SimTime>(static_cast<double>(span) * std::pow(kZoomPerNotch, notches)),
                                kMinSpan, kMaxSpan);
  const double before = static_cast<double>(anchor - from_) / static_cast<double>(span);
  const SimTime start = std::max<SimTime>(0, anchor - static_cast<SimTime>(before * static_cast<double>(width)));
  setRange(start, start + width);
}

void ViewState::panBy(double fraction) {
  if (!std::isfinite(fraction)) return;
  const SimTime span = to_ - from_;
  panTo(from_ + static_cast<SimTime>(fraction * static_cast<double>(span)), span);
}

void ViewState::panTo(SimTime start, SimTime span) {
  start = std::max<SimTime>(0, start);
  setRange(start, start + span);
}

void ViewState::goToTime(SimTime time) {
  const SimTime span = to_ - from_;
  panTo(time - span / 2, span);
}

void ViewState::setCursorTime(std::optional<SimTime> time) {
  if (time == cursor_) return;
  cursor_ = time;
  emit cursorChanged();
}

void ViewState::setFollowLive(bool follow) {
  if (follow == follow_live_) return;
  follow_live_ = follow;
  emit followLiveChanged(follow);
}

void ViewState::setLiveWindow(SimTime width) { live_window_ = std::max<SimTime>(secondsToTime(1), width); }

void ViewState::selectEvent(std::uint64_t seq, SimTime time) {
  selected_seq_ = seq;
  emit eventSelected(seq, time);
}

void ViewState::selectRequest(RequestId request) {
  selected_request_ = request;
  emit requestSelected(request);
}

void ViewState::selectWindow(SimTime from, SimTime to) {
  const SimTime margin = std::max<SimTime>(secondsToTime(5), (to - from) / 10);
  setRange(std::max<SimTime>(0, from - margin), to + margin);
  emit windowSelected(from, to);
}

void ViewState::highlightWorkers(const QStringList& subjects) {
  if (subjects == highlighted_) return;
  highlighted_ = subjects;
  emit workersHighlighted(subjects);
}

void ViewState::selectWorkers(const QStringList& workers) {
  if (workers == selected_workers_) return;
  selected_workers_ = workers;
  emit workersSelected(workers);
}

bool ViewState::isHighlighted(const QString& worker) const {
  for (const QString& s : highlighted_)
    if (s == worker || s.endsWith(QStringLiteral("->") + worker) || s.startsWith(worker + QStringLiteral("->")))
      return true;
  return false;
}

void ViewState::clearSelection() {
  selected_seq_ = 0;
  selected_request_ = 0;
}

}  // namespace kvscope
