#include "KvPoolPanel.h"

#include <QVBoxLayout>

#include "ViewState.h"
#include "WorkerColors.h"
#include "model/Overloaded.h"
#include "telemetry/TelemetryStore.h"

namespace kvscope {

std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, SimTime from, SimTime to) {
  std::vector<TimeSeriesChart::Marker> markers;
  for (const Event& e : store.controlChanges()) {
    if (e.time < from || e.time > to) continue;
    std::visit(Overloaded{[&](const KnobChanged& k) {
                            markers.push_back({e.time, QStringLiteral("%1=%2").arg(QString::fromStdString(k.name)).arg(k.new_value)});
                          },
                          [&](const PolicyChanged& p) {
                            markers.push_back({e.time, QStringLiteral("policy %1").arg(QString::fromStdString(p.new_policy))});
                          },
                          [](const auto&) {}},
               e.payload);
  }
  return markers;
}

KvPoolPanel::KvPoolPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      occupancy_(new TimeSeriesChart(view, tr("KV pool use (%)"), this)),
      sessions_(new TimeSeriesChart(view, tr("Resident sessions"), this)) {
  occupancy_->setFixedYRange(0, 100);
  occupancy_->setYLabelFormat("%.0f");
  sessions_->setYLabelFormat("%.0f");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(occupancy_, 3);
  layout->addWidget(sessions_, 2);
}

void KvPoolPanel::rebuild(const TelemetryStore& store) {
  workers_.clear();
  for (std::size_t i = 0; i < store.workers().size(); ++i) {
    const WorkerSeries& w = store.workers()[i];
    if (w.info.role == WorkerRole::Prefill) continue;
    const QString name = QString::fromStdString(w.info.name);
    occupancy_->addSeries(name, workerColor(static_cast<int>(i)));
    sessions_->addSeries(name, workerColor(static_cast<int>(i)));
    workers_.push_back(static_cast<int>(i));
  }
}

void KvPoolPanel::refresh(const TelemetryStore& store) {
  // Series are created once per run, then only replaced.
  if (store.runId() != run_id_) {
    run_id_ = store.runId();
    occupancy_->clearSeries();
    sessions_->clearSeries();
    rebuild(store);
  }
  for (std::size_t s = 0; s < workers_.size(); ++s) {
    const WorkerSeries& w = store.workers()[static_cast<std::size_t>(workers_[s])];
    occupancy_->setSeriesData(static_cast<int>(s), w.gauge(WorkerGauge::KvFraction), 100.0);
    sessions_->setSeriesData(static_cast<int>(s), w.gauge(WorkerGauge::ResidentSessions));
  }
  const auto knob = [&](const char* name, double fallback) {
    auto it = store.knobs().find(name);
    return it == store.knobs().end() ? fallback : it->second;
  };
  const double rho = knob("rho", store.run() ? store.run()->rho : 0.95);
  occupancy_->setThreshold(tr("rho x capacity"), rho * 100, QColor(0xd6, 0x27, 0x28));
  const double soft_cap = knob("session_soft_cap", 0);
  if (soft_cap > 0) sessions_->setThreshold(tr("session soft cap"), soft_cap, QColor(0xd6, 0x27, 0x28));
  const auto markers = knobMarkers(store, view().from(), view().to());
  occupancy_->setMarkers(markers);
  sessions_->setMarkers(markers);
}

}  // namespace kvscope
