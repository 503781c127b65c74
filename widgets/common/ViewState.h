#pragma once
// What the panels share: the visible time range (charts and the timeline move together), whether
// it follows the live edge, and the current selection (an event, a request, a time window).
#include <QObject>
#include <QStringList>

#include <algorithm>
#include <cstdint>

#include "core/model/Ids.h"

namespace kvscope {

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

 signals:
  void rangeChanged(SimTime from, SimTime to);
  void followLiveChanged(bool follow);
  void eventSelected(std::uint64_t seq, SimTime time);
  void requestSelected(RequestId request);
  void windowSelected(SimTime from, SimTime to);
  void workersHighlighted(const QStringList& subjects);
  void workersSelected(const QStringList& workers);

 private:
  void set(SimTime from, SimTime to);

  SimTime from_ = 0;
  SimTime to_ = secondsToTime(300);
  SimTime live_window_ = secondsToTime(300);
  SimTime lookahead_ = 0;
  bool follow_live_ = true;
  std::uint64_t selected_seq_ = 0;
  RequestId selected_request_ = 0;
  QStringList highlighted_;
  QStringList selected_workers_;
};

}  // namespace kvscope
