#include "widgets/charts/KvPoolPanel.h"

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "core/knobs/KnobRegistry.h"
#include "core/model/Overloaded.h"
#include "core/run/WhatIfPreview.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"
#include "widgets/common/WorkerColors.h"

namespace kvscope {

namespace {
const QString kRhoLine = QStringLiteral("rho x capacity");
const QString kSoftCapLine = QStringLiteral("session soft cap");
const QColor kLineColor(0xd6, 0x27, 0x28);

const KnobSpec* spec(std::string_view name) {
  for (const KnobSpec& s : KnobRegistry::specs())
    if (s.name == name) return &s;
  return nullptr;
}

QColor ghost(QColor c, int alpha) {
  c.setAlpha(alpha);
  return c;
}
}  // namespace

std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, SimTime from, SimTime to) {
  std::vector<TimeSeriesChart::Marker> markers;
  for (const Event& e : store.controlChanges()) {
    if (e.time < from || e.time > to) continue;
    std::visit(
        Overloaded{
            [&](const KnobChanged& k) {
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
  sessions_->setIntegerValues(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(occupancy_, 3);
  layout->addWidget(sessions_, 2);
  connect(occupancy_, &TimeSeriesChart::thresholdDragged, this, [this](const QString& label, double value) {
    if (label == kRhoLine) emit knobDragged("rho", std::round(value) / 100);  // whole percent steps
  });
  connect(sessions_, &TimeSeriesChart::thresholdDragged, this, [this](const QString& label, double value) {
    if (label == kSoftCapLine) emit knobDragged("session_soft_cap", std::round(value));
  });
}

std::vector<int> KvPoolPanel::chooseLines(const TelemetryStore& store) {
  if (static_cast<int>(decode_.size()) <= kBandAbove) return decode_;
  std::vector<int> lines;
  for (int index : decode_) {
    const QString name = QString::fromStdString(store.workers()[static_cast<std::size_t>(index)].info.name);
    if (view().selectedWorkers().contains(name) && static_cast<int>(lines.size()) < kMaxLines) lines.push_back(index);
  }
  if (!lines.empty()) return lines;
  // Nothing selected: the fullest pools now (the workers an operator worries about first).
  lines = decode_;
  auto fraction = [&](int index) {
    const WorkerGauges& g = store.workers()[static_cast<std::size_t>(index)].latest;
    return g.kv_capacity > 0 ? static_cast<double>(g.kv_used) / static_cast<double>(g.kv_capacity) : 0.0;
  };
  std::stable_sort(lines.begin(), lines.end(), [&](int a, int b) { return fraction(a) > fraction(b); });
  lines.resize(static_cast<std::size_t>(kDefaultLines));
  std::sort(lines.begin(), lines.end());
  return lines;
}

void KvPoolPanel::rebuild(const TelemetryStore& store) {
  occupancy_->clearSeries();
  sessions_->clearSeries();
  colors_.clear();
  positions_.clear();
  band_workers_.clear();
  for (std::size_t p = 0; p < decode_.size(); ++p) {
    const int index = decode_[p];
    if (std::find(workers_.begin(), workers_.end(), index) == workers_.end()) {
      band_workers_.push_back(index);
      continue;
    }
    const QString name = QString::fromStdString(store.workers()[static_cast<std::size_t>(index)].info.name);
    const QColor color = workerColor(index);
    occupancy_->addSeries(name, color);
    sessions_->addSeries(name, color);
    positions_.push_back(static_cast<int>(p));
    colors_.push_back(color);
  }
  if (band_workers_.empty()) {
    occupancy_->clearBand();
    sessions_->clearBand();
  }
  // Two ghosts per line, drawn only while a preview is shown.
  ghost_base_ = static_cast<int>(workers_.size());
  for (int future = 0; future < 2; ++future)
    for (std::size_t k = 0; k < workers_.size(); ++k) {
      const QString name = QString::fromStdString(store.workers()[static_cast<std::size_t>(workers_[k])].info.name) +
                           (future == 0 ? tr(" without the change") : tr(" with the change"));
      const QColor color = ghost(colors_[k], future == 0 ? 70 : 160);
      occupancy_->addSeries(name, color, TimeSeriesChart::Style::Ghost);
      sessions_->addSeries(name, color, TimeSeriesChart::Style::Ghost);
    }
}

void KvPoolPanel::drawBands(const TelemetryStore& store) {
  if (band_workers_.empty()) return;
  std::vector<std::vector<EnvelopeColumn>> kv, sessions;
  kv.reserve(band_workers_.size());
  sessions.reserve(band_workers_.size());
  for (int index : band_workers_) {
    const WorkerSeries& w = store.workers()[static_cast<std::size_t>(index)];
    kv.push_back(occupancy_->envelopeOf(w.gauge(WorkerGauge::KvFraction), 100.0));
    sessions.push_back(sessions_->envelopeOf(w.gauge(WorkerGauge::ResidentSessions)));
  }
  const QString legend = tr("band: %1 other D (min/median/max)").arg(band_workers_.size());
  const QColor grey(0x70, 0x70, 0x70);
  occupancy_->setBand(legend, workerBand(kv), grey);
  sessions_->setBand(legend, workerBand(sessions), grey);
}

void KvPoolPanel::refresh(const TelemetryStore& store) {
  // Series are created once per run (and when the lines change), then only replaced.
  if (store.runId() != run_id_) {
    run_id_ = store.runId();
    decode_.clear();
    for (std::size_t i = 0; i < store.workers().size(); ++i)
      if (store.workers()[i].info.role != WorkerRole::Prefill) decode_.push_back(static_cast<int>(i));
    workers_.clear();
    has_preview_ = false;
    occupancy_->clearSeries();
  }
  if (std::vector<int> lines = chooseLines(store); lines != workers_ || occupancy_->seriesCount() == 0) {
    workers_ = std::move(lines);
    rebuild(store);
  }
  occupancy_->setHoldUntil(store.now());
  sessions_->setHoldUntil(store.now());
  for (std::size_t s = 0; s < workers_.size(); ++s) {
    const WorkerSeries& w = store.workers()[static_cast<std::size_t>(workers_[s])];
    occupancy_->setSeriesData(static_cast<int>(s), w.gauge(WorkerGauge::KvFraction), 100.0);
    sessions_->setSeriesData(static_cast<int>(s), w.gauge(WorkerGauge::ResidentSessions));
  }
  drawBands(store);
  drawPreview();
  const auto knob = [&](const char* name, double fallback) {
    if (auto p = pending_.find(name); p != pending_.end()) return p->second;
    auto it = store.knobs().find(name);
    return it == store.knobs().end() ? fallback : it->second;
  };
  const double rho = knob("rho", store.run() ? store.run()->rho : 0.95);
  occupancy_->setThreshold(kRhoLine, rho * 100, kLineColor);
  if (const KnobSpec* s = spec("rho")) occupancy_->setDraggableThreshold(kRhoLine, s->min * 100, s->max * 100);
  const double soft_cap = knob("session_soft_cap", 0);
  if (soft_cap > 0) {
    sessions_->setThreshold(kSoftCapLine, soft_cap, kLineColor);
    if (const KnobSpec* s = spec("session_soft_cap"))
      sessions_->setDraggableThreshold(kSoftCapLine, std::max(1.0, s->min), s->max);
  }
  const auto markers = knobMarkers(store, view().from(), view().to());
  occupancy_->setMarkers(markers);
  sessions_->setMarkers(markers);
}

void KvPoolPanel::setPendingKnobs(const std::map<std::string, double>& pending) { pending_ = pending; }

void KvPoolPanel::setPreview(const WhatIfResult* preview) {
  has_preview_ = preview != nullptr;
  for (int f = 0; f < 2; ++f) {
    preview_kv_[f].clear();
    preview_sessions_[f].clear();
    if (!preview) continue;
    const WhatIfFuture& future = f == 0 ? preview->without : preview->with;
    preview_kv_[f] = future.kv;
    preview_sessions_[f] = future.sessions;
  }
  drawPreview();
}

void KvPoolPanel::drawPreview() {
  for (int f = 0; f < 2; ++f)
    for (std::size_t k = 0; k < workers_.size(); ++k) {
      const int index = ghost_base_ + f * static_cast<int>(workers_.size()) + static_cast<int>(k);
      if (index >= occupancy_->seriesCount()) return;
      const std::size_t p = static_cast<std::size_t>(positions_[k]);
      if (has_preview_ && p < preview_kv_[f].size()) {
        occupancy_->setSeriesData(index, preview_kv_[f][p], 100.0);
        sessions_->setSeriesData(index, preview_sessions_[f][p]);
      } else {
        occupancy_->clearSeriesData(index);
        sessions_->clearSeriesData(index);
      }
    }
}

}  // namespace kvscope
