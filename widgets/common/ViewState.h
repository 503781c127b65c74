#pragma once
// What the panels share: the visible time range and its one owner (every time view, chart or
// timeline, asks here to zoom, pan or follow and only reads the result, so they move identically),
// whether it follows the live edge, the time under the pointer in any of them (the shared cursor),
// and the current selection (an event, a request, a time window).
#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/Ids.h"
#include "core/run/RunNotes.h"

namespace kvscope {

struct ComparedRun;

class ViewState : public QObject {
  Q_OBJECT
 public:
  explicit ViewState(QObject* parent = nullptr) : QObject(parent) {}

  SimTime from() const { return from_; }
  SimTime to() const { return to_; }
  bool followLive() const { return follow_live_; }
  SimTime liveWindow() const { return live_window_; }

  // Called by the frame timer: when following, the range ends at `now`.
  void advanceLive(SimTime now);
  // A user zoom or pan: stops following.
  void setRange(SimTime from, SimTime to);
  void setFollowLive(bool follow);
  void setLiveWindow(SimTime width);
  // The range actions. Each stops following the live edge except resetZoom. One wheel notch zooms
  // to kZoomPerNotch of the span (or out by its inverse); spans stay within [kMinSpan, kMaxSpan].
  static constexpr double kZoomPerNotch = 0.8;
  static constexpr SimTime kMinSpan = 1'000;                      // 1 ms: below it every event is alone anyway
  static constexpr SimTime kMaxSpan = secondsToTime(30 * 86400);  // far beyond any run
  // Zooms by `notches` (> 0 in, < 0 out; fractions from a trackpad) about `anchor`, which keeps its
  // place on screen: what the pointer is on stays under it.
  void zoomAbout(SimTime anchor, double notches);
  void zoomIn() { zoomAbout(from_ + (to_ - from_) / 2, 1); }
  void zoomOut() { zoomAbout(from_ + (to_ - from_) / 2, -1); }
  // Moves the range by `fraction` of its span (> 0: later), keeping the span; never before 0.
  void panBy(double fraction);
  // The range starting at `start` with the span it had (a drag from a saved start).
  void panTo(SimTime start, SimTime span);
  // Centres `time`, keeping the span (Go to time, a picked event that is out of view).
  void goToTime(SimTime time);
  // Back to following the live edge with the live window (View > Reset zoom).
  void resetZoom() { setFollowLive(true); }
  // Back to the range before the last zoom, pan or jump (View > Undo zoom, Ctrl+Z), following
  // live again if it was. The events of one gesture (a drag, a wheel spin) are one step; false
  // when there is nothing to undo.
  bool undoRange();
  int undoDepth() const { return static_cast<int>(history_.size()); }

  // The time under the pointer in whichever time view it is over; nullopt when over none. Each time
  // view draws it as a line, charts with their series' values at it.
  void setCursorTime(std::optional<SimTime> time);
  std::optional<SimTime> cursorTime() const { return cursor_; }

  // Following the live edge shows this much time after it too (a preview's future); 0 = none.
  void setLookahead(SimTime lookahead) { lookahead_ = std::max<SimTime>(0, lookahead); }
  SimTime lookahead() const { return lookahead_; }

  std::uint64_t selectedSeq() const { return selected_seq_; }
  RequestId selectedRequest() const { return selected_request_; }
  void selectEvent(std::uint64_t seq, SimTime time);
  void selectRequest(RequestId request);
  // Selects a window (a diagnosis finding) and shows it, with a little margin, everywhere.
  void selectWindow(SimTime from, SimTime to);
  void clearSelection();
  // Workers (or links, "P0->D1") a selected finding concerns: every panel marks them.
  void highlightWorkers(const QStringList& subjects);
  const QStringList& highlightedWorkers() const { return highlighted_; }
  // True when `worker` ("D1") is highlighted itself or as the decode end of a highlighted link.
  bool isHighlighted(const QString& worker) const;
  // Workers the operator picked (a click in the worker strip): with many workers the charts draw
  // these as lines and the rest as a band. Empty: each chart picks its worst few.
  void selectWorkers(const QStringList& workers);
  const QStringList& selectedWorkers() const { return selected_workers_; }
  // The workers the worker strip lists as worst (crashed ... evicting), in its order: with none
  // picked, the charts draw these as lines, so the chart and the strip's top rows agree.
  void setWorstWorkers(const QStringList& workers) { worst_workers_ = workers; }
  const QStringList& worstWorkers() const { return worst_workers_; }
  // The operator's notes on the open recording (RunNotes): every time view draws them.
  void setNotes(std::vector<RunNote> notes) {
    notes_ = std::move(notes);
    emit notesChanged();
  }
  const std::vector<RunNote>& notes() const { return notes_; }
  // Shows `time` and asks the replay, if any, to go there (a note jumped to).
  void jumpTo(SimTime time) {
    goToTime(time);
    emit jumpRequested(time);
  }
  // A second run drawn beside this one, B dashed beside A solid (File > Compare with...); null when
  // none. B's time t is drawn at A's time t + comparisonOffset(), so runs that started apart align.
  void setComparison(std::shared_ptr<const ComparedRun> run) {
    comparison_ = std::move(run);
    emit comparisonChanged();
  }
  const ComparedRun* comparison() const { return comparison_.get(); }
  void setComparisonOffset(SimTime offset) {
    comparison_offset_ = offset;
    emit comparisonChanged();
  }
  SimTime comparisonOffset() const { return comparison_offset_; }

 signals:
  // Fully qualified types: moc matches a signal's arguments by their spelled names.
  void rangeChanged(kvscope::SimTime from, kvscope::SimTime to);
  void cursorChanged();
  void followLiveChanged(bool follow);
  void eventSelected(std::uint64_t seq, kvscope::SimTime time);
  void requestSelected(kvscope::RequestId request);
  void windowSelected(kvscope::SimTime from, kvscope::SimTime to);
  void workersHighlighted(const QStringList& subjects);
  void workersSelected(const QStringList& workers);
  void notesChanged();
  void jumpRequested(kvscope::SimTime time);
  void comparisonChanged();

 private:
  void set(SimTime from, SimTime to);
  void remember();  // the range as it is, before a user's change

  SimTime from_ = 0;
  SimTime to_ = secondsToTime(300);
  SimTime live_window_ = secondsToTime(300);
  SimTime lookahead_ = 0;
  bool follow_live_ = true;
  std::optional<SimTime> cursor_;
  std::uint64_t selected_seq_ = 0;
  RequestId selected_request_ = 0;
  QStringList highlighted_;
  QStringList worst_workers_;
  struct Stop {
    SimTime from, to;
    bool follow;
  };
  std::vector<Stop> history_;
  std::int64_t last_remembered_ms_ = -1;
  QStringList selected_workers_;
  std::vector<RunNote> notes_;
  std::shared_ptr<const ComparedRun> comparison_;
  SimTime comparison_offset_ = 0;
};

}  // namespace kvscope
