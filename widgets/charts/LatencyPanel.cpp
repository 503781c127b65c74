#include "widgets/charts/LatencyPanel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/run/WhatIfPreview.h"
#include "core/telemetry/ComparedRun.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/charts/KnobMarkers.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

LatencyPanel::LatencyPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      window_(new QComboBox(this)),
      table_(new QTableWidget(2, 4, this)),
      failures_(new QLabel(this)),
      chart_(new TimeSeriesChart(view, tr("Latency of finished requests (s)"), this)) {
  window_->addItem(tr("last 60 s"), 60.0);
  window_->addItem(tr("last 5 min"), 300.0);
  window_->addItem(tr("last 30 min"), 1800.0);
  window_->addItem(tr("whole run"), 1e12);
  window_->setCurrentIndex(1);
  connect(window_, &QComboBox::currentIndexChanged, this, [this] { since_table_.invalidate(); });
  table_->setHorizontalHeaderLabels({tr("p50"), tr("p90"), tr("p99"), tr("requests")});
  table_->setVerticalHeaderLabels({tr("TTFT (s)"), tr("E2E (s)")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  // Both rows in view, never a scroll bar: the header and two rows, exactly.
  table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->setFixedHeight(table_->horizontalHeader()->sizeHint().height() +
                         2 * table_->verticalHeader()->defaultSectionSize() + 2 * table_->frameWidth());
  chart_->setUnit(QStringLiteral("s"));
  // One point per finished request: nothing to hold between two of them.
  chart_->addSeries(tr("TTFT"), QColor(0x1f, 0x77, 0xb4), TimeSeriesChart::Style::Points);
  chart_->addSeries(tr("E2E"), QColor(0xff, 0x7f, 0x0e), TimeSeriesChart::Style::Points);
  // Series 2-5: a preview's futures, drawn only while one is shown.
  for (const bool with : {false, true})
    for (const auto& [name, rgb] :
         {std::pair{tr("TTFT"), QColor(0x1f, 0x77, 0xb4)}, std::pair{tr("E2E"), QColor(0xff, 0x7f, 0x0e)}}) {
      QColor color = rgb;
      color.setAlpha(with ? 160 : 70);
      chart_->addSeries(name + (with ? tr(" with the change") : tr(" without the change")), color,
                        TimeSeriesChart::Style::GhostPoints, name);
    }
  // Series 6-7: the compared run's (ViewState::comparison), dashed beside this run's.
  chart_->addSeries(tr("TTFT B"), QColor(0x1f, 0x77, 0xb4), TimeSeriesChart::Style::ComparedPoints, tr("TTFT"));
  chart_->addSeries(tr("E2E B"), QColor(0xff, 0x7f, 0x0e), TimeSeriesChart::Style::ComparedPoints, tr("E2E"));
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Window:"), this));
  top->addWidget(window_);
  top->addWidget(failures_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(table_);
  layout->addWidget(chart_, 1);
}

void LatencyPanel::setPreview(const WhatIfResult* preview) {
  if (!preview)
    preview_.reset();
  else
    preview_ =
        std::array<MinMaxSeries, 4>{preview->without.ttft, preview->without.e2e, preview->with.ttft, preview->with.e2e};
  drawPreview();
}

void LatencyPanel::drawPreview() {
  for (int g = 0; g < 4; ++g) {
    if (preview_)
      chart_->setSeriesData(2 + g, (*preview_)[static_cast<std::size_t>(g)]);
    else
      chart_->clearSeriesData(2 + g);
  }
}

double LatencyPanel::windowSeconds() const { return window_->currentData().toDouble(); }

void LatencyPanel::setWindowSeconds(double seconds) {
  const int i = window_->findData(seconds);
  if (i >= 0) window_->setCurrentIndex(i);
  since_table_.invalidate();
}

void LatencyPanel::refreshNow(const TelemetryStore& store) {
  since_table_.invalidate();
  refresh(store);
}

void LatencyPanel::refresh(const TelemetryStore& store) {
  chart_->setHoldUntil(store.now());
  chart_->setSeriesData(0, store.ttftSeries());
  chart_->setSeriesData(1, store.e2eSeries());
  if (const ComparedRun* other = view().comparison()) {
    const SimTime offset = view().comparisonOffset();
    chart_->setComparedData(6, other->store_b.ttftSeries(), 1, offset, other->store_b.now());
    chart_->setComparedData(7, other->store_b.e2eSeries(), 1, offset, other->store_b.now());
  } else {
    chart_->clearSeriesData(6);
    chart_->clearSeriesData(7);
  }
  drawPreview();
  chart_->setMarkers(knobMarkers(store, view()));
  // Percentiles sort the window's samples: about four times a second is plenty to read them.
  if (since_table_.isValid() && since_table_.elapsed() < 250 && !store.finished()) return;
  since_table_.start();
  const LatencyWindow w = store.latencyWindow(windowSeconds());
  auto set = [&](int row, const SampleSummary& s) {
    const double values[] = {s.p50, s.p90, s.p99};
    for (int c = 0; c < 3; ++c) {
      const QString text = s.count > 0 ? QString::number(values[c], 'f', 3) : QStringLiteral("-");
      if (!table_->item(row, c)) table_->setItem(row, c, new QTableWidgetItem);
      table_->item(row, c)->setText(text);
      table_->item(row, c)->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (!table_->item(row, 3)) table_->setItem(row, 3, new QTableWidgetItem);
    table_->item(row, 3)->setText(QString::number(s.count));
  };
  set(0, w.ttft_s);
  set(1, w.e2e_s);
  failures_->setText(
      tr("failure rate %1 % (%2 of %3)").arg(w.failure_rate * 100, 0, 'f', 1).arg(w.failed).arg(w.requests));
}

}  // namespace kvscope
