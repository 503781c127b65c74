#pragma once
// Panel 2: per-worker KV pool occupancy over time against the rho * capacity admission line, and
// resident sessions against the session soft cap (a WorkerChartPanel of the two gauges: lines, the
// band of the others past eight workers, a preview's ghosts). Both lines are handles: dragging one
// sets the knob's pending value (knobDragged while moving, then the knobs panel holds it until
// Apply), and a pending value is drawn instead of the run's.
#include <map>
#include <string>

#include "widgets/charts/WorkerChartPanel.h"

namespace kvscope {

class KvPoolPanel : public WorkerChartPanel {
  Q_OBJECT
 public:
  KvPoolPanel(ViewState& view, QWidget* parent = nullptr);
  TimeSeriesChart& occupancyChart() { return chart(0); }
  TimeSeriesChart& sessionsChart() { return chart(1); }

  // Knob values waiting for Apply: the lines show them instead of the run's.
  void setPendingKnobs(const std::map<std::string, double>& pending) { pending_ = pending; }

 signals:
  void knobDragged(const std::string& knob, double value);

 protected:
  void decorate(const TelemetryStore& store) override;

 private:
  std::map<std::string, double> pending_;
};

}  // namespace kvscope
