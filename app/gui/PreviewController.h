#pragma once
// The knobs panel's what-if preview: while a knob or policy change is pending on a simulation
// (embedded, or served by `kvscope-cli serve`), has the source fork the run at its current time and
// play the next minutes (default 10) without and with the change, off the GUI thread, then draws
// both futures as ghosts on the per-worker charts and their numbers in the knobs panel. A newer
// pending value cancels the fork in flight; a slider forks on its release, not during the drag;
// Apply or Revert clears the preview. A shown preview is not forked again while the run goes on
// (at 64 D each fork took seconds of both cores): its caption ages, and Apply refuses one the run
// has moved a tenth of the horizon past, previewing again from now instead.
#include <QObject>
#include <QTimer>

#include <atomic>
#include <memory>

#include "core/model/Ids.h"

namespace kvscope {

class KnobsPanel;
class KvPoolPanel;
class PanelDocks;
class RunSession;
class ViewState;
class WhatIfTable;
struct WhatIfResult;

class PreviewController : public QObject {
  Q_OBJECT
 public:
  PreviewController(RunSession& session, ViewState& view, PanelDocks& docks, QObject* parent = nullptr);
  ~PreviewController() override;

  void setHorizon(SimTime horizon) { horizon_ = horizon; }
  bool busy() const { return running_ != nullptr; }
  const WhatIfResult* last() const { return last_.get(); }

 signals:
  void previewShown();  // a preview's futures were drawn (tests wait for it)

 private:
  void schedule();
  void start();
  void show(std::shared_ptr<WhatIfResult> result, std::uint64_t generation, const QString& note, const QString& error);
  void clear();

  RunSession& session_;
  ViewState& view_;
  PanelDocks& docks_;
  KnobsPanel& knobs_;
  KvPoolPanel& kv_;
  WhatIfTable& table_;
  QString refuseStale();  // KnobsPanel's apply check: why not (and a new fork), or empty

  QTimer debounce_;
  QTimer staleness_;
  SimTime horizon_ = secondsToTime(600);
  std::shared_ptr<std::atomic<bool>> running_;  // the fork in flight's cancel flag
  std::uint64_t generation_ = 0;
  std::shared_ptr<WhatIfResult> last_;
};

}  // namespace kvscope
