#pragma once
// Panel 9, replay mode: play/pause, speed (0.25x to 100x), a scrubber showing the recording's
// event density, and jumps to the previous/next event of a chosen kind (e.g. the next crash),
// which seek there and select the event on the timeline once it has been replayed.
#include <memory>
#include <optional>
#include <vector>

#include "widgets/common/TelemetryPanel.h"
#include "widgets/timeline/TimelineKind.h"

class QComboBox;
class QLabel;
class QToolButton;

namespace kvscope {

class RunControl;

class ReplayScrubber;
class Source;

class ReplayControlsPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  ReplayControlsPanel(ViewState& view, QWidget* parent = nullptr);
  void setSource(Source* source);
  void refresh(const TelemetryStore& store) override;

  // Seeks to the next (or previous) event of the chosen kind after (before) the current position;
  // false when there is none.
  bool jump(int direction);
  void step(SimTime delta);
  void setKind(TimelineKind kind);
  void setSpeed(double speed);
  ReplayScrubber& scrubber() { return *scrubber_; }

 private:
  RunControl* control() const;  // the source's, or null
  void seek(SimTime time);
  void updateEnabled();

  Source* source_ = nullptr;
  std::shared_ptr<const std::vector<Event>> overview_;
  QToolButton* play_;
  QComboBox* speed_;
  QComboBox* kind_;
  QToolButton* previous_;
  QToolButton* next_;
  QLabel* time_;
  ReplayScrubber* scrubber_;
  struct PendingSelection {
    TimelineKind kind;
    SimTime time;
  };
  std::optional<PendingSelection> pending_;
};

}  // namespace kvscope
