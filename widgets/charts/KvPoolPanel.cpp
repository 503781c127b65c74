#include "widgets/charts/KvPoolPanel.h"

#include <algorithm>
#include <cmath>

#include "core/knobs/KnobRegistry.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

namespace {
const QString kRhoLine = QStringLiteral("rho x capacity");
const QString kSoftCapLine = QStringLiteral("session soft cap");
const QColor kLineColor(0xd6, 0x27, 0x28);

const KnobSpec* knobSpec(std::string_view name) {
  for (const KnobSpec& s : KnobRegistry::specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<WorkerChartSpec> kvPoolCharts() {
  std::vector<WorkerChartSpec> charts(2);
  charts[0].gauge = WorkerGauge::KvFraction;
  charts[0].title = KvPoolPanel::tr("KV pool use (%)");
  charts[0].scale = 100;
  charts[0].stretch = 3;
  charts[0].y_range = std::pair{0.0, 100.0};
  charts[0].unit = QStringLiteral("%");
  charts[0].difference_when_compared = true;  // where two runs part: KV use A - B
  charts[1].gauge = WorkerGauge::ResidentSessions;
  charts[1].title = KvPoolPanel::tr("Resident sessions");
  charts[1].stretch = 2;
  charts[1].integer_values = true;
  charts[1].unit = KvPoolPanel::tr("sessions");
  return charts;
}
}  // namespace

KvPoolPanel::KvPoolPanel(ViewState& view, QWidget* parent) : WorkerChartPanel(view, kvPoolCharts(), parent) {
  connect(&occupancyChart(), &TimeSeriesChart::thresholdDragged, this, [this](const QString& label, double value) {
    if (label == kRhoLine) emit knobDragged("rho", std::round(value) / 100);  // whole percent steps
  });
  connect(&sessionsChart(), &TimeSeriesChart::thresholdDragged, this, [this](const QString& label, double value) {
    if (label == kSoftCapLine) emit knobDragged("session_soft_cap", std::round(value));
  });
}

void KvPoolPanel::decorate(const TelemetryStore& store) {
  const auto knob = [&](const char* name, double fallback) {
    if (auto p = pending_.find(name); p != pending_.end()) return p->second;
    auto it = store.knobs().find(name);
    return it == store.knobs().end() ? fallback : it->second;
  };
  const double rho = knob("rho", store.run() ? store.run()->rho : 0.95);
  occupancyChart().setThreshold(kRhoLine, rho * 100, kLineColor);
  if (const KnobSpec* s = knobSpec("rho")) occupancyChart().setDraggableThreshold(kRhoLine, s->min * 100, s->max * 100);
  const double soft_cap = knob("session_soft_cap", 0);
  if (soft_cap > 0) {
    sessionsChart().setThreshold(kSoftCapLine, soft_cap, kLineColor);
    if (const KnobSpec* s = knobSpec("session_soft_cap"))
      sessionsChart().setDraggableThreshold(kSoftCapLine, std::max(1.0, s->min), s->max);
  }
}

}  // namespace kvscope
