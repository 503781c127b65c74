#include "widgets/charts/WorkerChartPanel.h"

#include <QVBoxLayout>

#include <algorithm>

#include "core/run/WhatIfPreview.h"
#include "core/telemetry/ComparedRun.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/charts/KnobMarkers.h"
#include "widgets/charts/WorkerBand.h"
#include "widgets/common/ViewState.h"
#include "widgets/common/WorkerColors.h"

namespace kvscope {

namespace {
QColor ghost(QColor c, int alpha) {
  c.setAlpha(alpha);
  return c;
}

QString workerName(const TelemetryStore& store, int index) {
  return QString::fromStdString(store.workers()[static_cast<std::size_t>(index)].info.name);
}
}  // namespace

WorkerChartSpec WorkerChartSpec::of(WorkerGauge gauge) {
  WorkerChartSpec spec;
  spec.gauge = gauge;
  QString label = QString::fromLatin1(toString(gauge));
  if (!label.isEmpty()) label[0] = label[0].toUpper();
  if (isFraction(gauge)) {
    spec.title = WorkerChartPanel::tr("%1 per D (%)").arg(label);
    spec.scale = 100;
    spec.y_range = std::pair{0.0, 100.0};
    spec.unit = QStringLiteral("%");
  } else {
    spec.title = WorkerChartPanel::tr("%1 per D").arg(label);
    spec.integer_values = true;
    spec.unit = label.section(QLatin1Char(' '), -1);  // what is counted: "queued requests" -> "requests"
  }
  return spec;
}

WorkerChartPanel::WorkerChartPanel(ViewState& view, std::vector<WorkerChartSpec> charts, QWidget* parent)
    : TelemetryPanel(view, parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  for (WorkerChartSpec& spec : charts) {
    Chart chart;
    chart.view = new TimeSeriesChart(view, spec.title, this);
    if (spec.y_range) chart.view->setFixedYRange(spec.y_range->first, spec.y_range->second);
    chart.view->setIntegerValues(spec.integer_values);
    chart.view->setUnit(spec.unit);
    layout->addWidget(chart.view, spec.stretch);
    if (spec.difference_when_compared) {
      chart.difference = new TimeSeriesChart(view, tr("%1, A - B").arg(spec.title), this);
      chart.difference->setSignedY(true);
      chart.difference->setUnit(spec.unit == QStringLiteral("%") ? tr("points") : spec.unit);
      chart.difference->hide();
      layout->addWidget(chart.difference, std::max(1, spec.stretch / 2));
    }
    chart.spec = std::move(spec);
    charts_.push_back(std::move(chart));
  }
}

void WorkerChartPanel::decorate(const TelemetryStore&) {}

std::vector<int> WorkerChartPanel::chooseLines(const TelemetryStore& store) {
  if (static_cast<int>(decode_.size()) <= kBandAbove || charts_.empty()) return decode_;
  std::vector<int> lines;
  for (int index : decode_)
    if (view().selectedWorkers().contains(workerName(store, index)) && static_cast<int>(lines.size()) < kMaxLines)
      lines.push_back(index);
  if (!lines.empty()) return lines;
  // Nothing selected: the worker strip's worst (so the chart and the strip's top rows agree), then
  // the highest now on the first chart (the fullest pools, the longest queues).
  for (const QString& name : view().worstWorkers())
    for (int index : decode_)
      if (workerName(store, index) == name && static_cast<int>(lines.size()) < kDefaultLines) lines.push_back(index);
  std::vector<int> rest;
  for (int index : decode_)
    if (std::find(lines.begin(), lines.end(), index) == lines.end()) rest.push_back(index);
  const WorkerGauge gauge = charts_.front().spec.gauge;
  auto now = [&](int index) {
    const MinMaxSeries& s = store.workers()[static_cast<std::size_t>(index)].gauge(gauge);
    return s.empty() ? 0.0 : s.lastValue();
  };
  std::stable_sort(rest.begin(), rest.end(), [&](int a, int b) { return now(a) > now(b); });
  for (std::size_t i = 0; i < rest.size() && static_cast<int>(lines.size()) < kDefaultLines; ++i)
    lines.push_back(rest[i]);
  std::sort(lines.begin(), lines.end());
  return lines;
}

void WorkerChartPanel::rebuild(const TelemetryStore& store) {
  std::vector<QColor> colors;
  positions_.clear();
  band_workers_.clear();
  for (Chart& c : charts_) c.view->clearSeries();
  for (std::size_t p = 0; p < decode_.size(); ++p) {
    const int index = decode_[p];
    if (std::find(workers_.begin(), workers_.end(), index) == workers_.end()) {
      band_workers_.push_back(index);
      continue;
    }
    const QColor color = workerColor(index);
    for (Chart& c : charts_) c.view->addSeries(workerName(store, index), color);
    positions_.push_back(static_cast<int>(p));
    colors.push_back(color);
  }
  if (band_workers_.empty())
    for (Chart& c : charts_) c.view->clearBand();
  // The compared run's lines: after the ghosts, so the ghosts' indices do not depend on a comparison.
  const int ghosts = 2 * static_cast<int>(workers_.size());
  compared_base_ = static_cast<int>(workers_.size()) + ghosts;
  compared_workers_.clear();
  for (Chart& c : charts_)
    if (c.difference) {
      c.difference->clearSeries();
      c.difference->setVisible(compared_ != nullptr);
    }
  // Two ghosts per line, drawn only while a preview is shown.
  ghost_base_ = static_cast<int>(workers_.size());
  for (int future = 0; future < 2; ++future)
    for (std::size_t k = 0; k < workers_.size(); ++k) {
      const QString owner = workerName(store, workers_[k]);
      const QString name = owner + (future == 0 ? tr(" without the change") : tr(" with the change"));
      const QColor color = ghost(colors[k], future == 0 ? 70 : 160);
      for (Chart& c : charts_) c.view->addSeries(name, color, TimeSeriesChart::Style::Ghost, owner);
    }
  if (!compared_) return;
  const auto& others = compared_->store_b.workers();
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    const QString name = workerName(store, workers_[k]);
    const auto same = std::find_if(others.begin(), others.end(),
                                   [&](const auto& w) { return QString::fromStdString(w.info.name) == name; });
    compared_workers_.push_back(same == others.end() ? -1 : static_cast<int>(same - others.begin()));
    for (Chart& c : charts_) {
      c.view->addSeries(name + tr(" B"), colors[k], TimeSeriesChart::Style::Compared, name);
      if (c.difference) c.difference->addSeries(name, colors[k]);
    }
  }
}

// Each line's twin in the compared run, at the view's offset, and each difference chart's A - B:
// per column where both runs have a value, the difference of the columns' mid values.
void WorkerChartPanel::drawCompared() {
  if (!compared_) return;
  const TelemetryStore& other = compared_->store_b;
  for (Chart& c : charts_) {
    for (std::size_t k = 0; k < compared_workers_.size(); ++k) {
      const int index = compared_base_ + static_cast<int>(k);
      if (index >= c.view->seriesCount()) break;
      if (compared_workers_[k] < 0) {
        c.view->clearSeriesData(index);
        continue;
      }
      c.view->setComparedData(index,
                              other.workers()[static_cast<std::size_t>(compared_workers_[k])].gauge(c.spec.gauge),
                              c.spec.scale, view().comparisonOffset(), other.now());
      if (!c.difference || static_cast<int>(k) >= c.difference->seriesCount()) continue;
      const auto& a = c.view->drawnColumns(static_cast<int>(k));
      const auto& b = c.view->drawnColumns(index);
      std::vector<EnvelopeColumn> diff(std::min(a.size(), b.size()));
      for (std::size_t col = 0; col < diff.size(); ++col) {
        if (!a[col].present || !b[col].present) continue;
        const double d = (a[col].lo + a[col].hi) / 2 - (b[col].lo + b[col].hi) / 2;
        diff[col] = EnvelopeColumn{true, a[col].exact && b[col].exact, d, d};
      }
      c.difference->setSeriesColumns(static_cast<int>(k), std::move(diff));
    }
  }
}

void WorkerChartPanel::drawBands(const TelemetryStore& store) {
  if (band_workers_.empty()) return;
  const QString legend = tr("band: %1 other D (min/median/max)").arg(band_workers_.size());
  const QColor grey(0x70, 0x70, 0x70);
  for (Chart& c : charts_) {
    std::vector<std::vector<EnvelopeColumn>> envelopes;
    envelopes.reserve(band_workers_.size());
    for (int index : band_workers_)
      envelopes.push_back(
          c.view->envelopeOf(store.workers()[static_cast<std::size_t>(index)].gauge(c.spec.gauge), c.spec.scale));
    c.view->setBand(legend, workerBand(envelopes), grey);
  }
}

void WorkerChartPanel::refresh(const TelemetryStore& store) {
  // Series are created once per run (and when the lines change), then only replaced.
  if (store.runId() != run_id_) {
    run_id_ = store.runId();
    decode_.clear();
    for (std::size_t i = 0; i < store.workers().size(); ++i)
      if (store.workers()[i].info.role != WorkerRole::Prefill) decode_.push_back(static_cast<int>(i));
    workers_.clear();
    has_preview_ = false;
    for (Chart& c : charts_) c.view->clearSeries();
  }
  if (charts_.empty()) return;
  const bool compared_changed = view().comparison() != compared_;
  compared_ = view().comparison();
  if (std::vector<int> lines = chooseLines(store);
      lines != workers_ || chart(0).seriesCount() == 0 || compared_changed) {
    workers_ = std::move(lines);
    rebuild(store);
  }
  const auto markers = knobMarkers(store, view());
  for (Chart& c : charts_) {
    c.view->setHoldUntil(store.now());
    for (std::size_t s = 0; s < workers_.size(); ++s)
      c.view->setSeriesData(static_cast<int>(s),
                            store.workers()[static_cast<std::size_t>(workers_[s])].gauge(c.spec.gauge), c.spec.scale);
    c.view->setMarkers(markers);
  }
  drawBands(store);
  drawPreview();
  drawCompared();
  for (Chart& c : charts_)
    if (c.difference) c.difference->setMarkers(markers);
  decorate(store);
}

void WorkerChartPanel::setPreview(const WhatIfResult* preview) {
  has_preview_ = preview != nullptr;
  for (Chart& c : charts_)
    for (int f = 0; f < 2; ++f) {
      c.future[f].clear();
      if (!preview) continue;
      const WhatIfFuture& future = f == 0 ? preview->without : preview->with;
      if (const std::vector<MinMaxSeries>* series = future.perWorker(c.spec.gauge)) c.future[f] = *series;
    }
  drawPreview();
}

void WorkerChartPanel::drawPreview() {
  const int lines = static_cast<int>(workers_.size());
  for (Chart& c : charts_) {
    if (ghost_base_ + 2 * lines > c.view->seriesCount()) continue;  // no lines yet
    for (int f = 0; f < 2; ++f)
      for (std::size_t k = 0; k < workers_.size(); ++k) {
        const int index = ghost_base_ + f * lines + static_cast<int>(k);
        const auto p = static_cast<std::size_t>(positions_[k]);
        if (has_preview_ && p < c.future[f].size())
          c.view->setSeriesData(index, c.future[f][p], c.spec.scale);
        else
          c.view->clearSeriesData(index);
      }
  }
}

}  // namespace kvscope
