#include "widgets/charts/LabMetricsPanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/telemetry/ComparedRun.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/charts/KnobMarkers.h"
#include "widgets/charts/LabPlots.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/charts/WorkerBand.h"
#include "widgets/common/ViewState.h"
#include "widgets/common/WorkerColors.h"

namespace kvscope {

namespace {

QString percent(const std::optional<double>& v) {
  return v ? QString::number(*v * 100, 'f', 1) + "%" : QStringLiteral("-");
}
QString seconds(const std::optional<double>& v) { return v ? QString::number(*v, 'f', 3) : QStringLiteral("-"); }

void setCell(QTableWidget& t, int row, int column, const QString& text) {
  if (!t.item(row, column)) {
    auto* item = new QTableWidgetItem;
    item->setTextAlignment(column == 0 ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignRight | Qt::AlignVCenter);
    t.setItem(row, column, item);
  }
  if (t.item(row, column)->text() != text) t.item(row, column)->setText(text);
}

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
  auto* t = new QTableWidget(0, static_cast<int>(headers.size()), parent);
  t->setHorizontalHeaderLabels(headers);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  t->verticalHeader()->hide();
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  return t;
}

}  // namespace

LabMetricsPanel::LabMetricsPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      headline_(new QLabel(this)),
      figures_(new QSplitter(Qt::Horizontal, this)),
      apc_(new TimeSeriesChart(view, tr("APC, last 60 s (%)"), this)),
      ecdf_(new EcdfPlot(this)),
      by_turn_(new TurnBarPlot(this)),
      classes_(makeTable({tr("class"), tr("requests"), tr("TTFT p90"), tr("E2E p90")}, this)),
      workers_(makeTable({tr("worker"), tr("requests"), tr("TTFT p90"), tr("APC 60 s")}, this)) {
  headline_->setObjectName(QStringLiteral("labHeadline"));
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  apc_->setFixedYRange(0, 100);
  apc_->setUnit(QStringLiteral("%"));
  // Side by side, as the lab's figures sit on a page: the bottom dock is wide and short.
  figures_->addWidget(apc_);
  figures_->addWidget(ecdf_);
  figures_->addWidget(by_turn_);
  auto* tables = new QWidget(this);
  auto* tables_layout = new QVBoxLayout(tables);
  tables_layout->setContentsMargins(0, 0, 0, 0);
  classes_->setToolTip(
      tr("Latencies in seconds. HEAVY: at least 20,000 uncached tokens; WARM: more than half cached or under 5,000 "
         "uncached; MEDIUM: the rest (the lab's HEAVY_THRESHOLD)"));
  classes_->setRowCount(3);
  classes_->setMaximumHeight(classes_->horizontalHeader()->sizeHint().height() +
                             3 * classes_->verticalHeader()->defaultSectionSize() + 2 * classes_->frameWidth());
  tables_layout->addWidget(classes_);
  tables_layout->addWidget(workers_, 1);
  // Tabbed with the latency panel in a side column: no taller at its minimum than that panel, so
  // the default layout fits a 1280x800 window.
  setMinimumSize(200, 100);
  figures_->addWidget(tables);
  figures_->setStretchFactor(0, 3);
  for (int i = 1; i < 4; ++i) figures_->setStretchFactor(i, 2);
  figures_->setChildrenCollapsible(false);
  figures_->setSizes({300, 200, 200, 220});  // proportions: QSplitter scales them to its width
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(headline_);
  layout->addWidget(figures_, 1);
}

void LabMetricsPanel::rebuildSeries(const TelemetryStore& store) {
  run_id_ = store.runId();
  apc_->clearSeries();
  apc_->clearBand();
  apc_->addSeries(tr("ceiling"), QColor(150, 150, 150));  // an unbounded cache, every worker
  apc_->addSeries(tr("all"), QColor(30, 30, 30));
  const auto& workers = store.workers();
  lined_workers_ = workers.size() <= static_cast<std::size_t>(kLinesAbove) ? workers.size() : 0;
  for (std::size_t w = 0; w < lined_workers_; ++w)
    apc_->addSeries(QString::fromStdString(workers[w].info.name), workerColor(static_cast<int>(w)));
  // The compared run's APC over all workers, dashed (drawn only while a run is compared).
  compared_series_ = apc_->addSeries(tr("all B"), QColor(30, 30, 30), TimeSeriesChart::Style::Compared, tr("all"));
  workers_->setRowCount(static_cast<int>(workers.size()));
}

void LabMetricsPanel::refreshNow(const TelemetryStore& store) {
  since_tables_.invalidate();
  refresh(store);
}

void LabMetricsPanel::refresh(const TelemetryStore& store) {
  if (store.runId() != run_id_) rebuildSeries(store);
  apc_->setHoldUntil(store.now());
  apc_->setSeriesData(0, store.apcCeilingSeries(), 100);
  apc_->setSeriesData(1, store.apcSeries(), 100);
  const auto& workers = store.workers();
  for (std::size_t w = 0; w < lined_workers_ && w < workers.size(); ++w)
    apc_->setSeriesData(2 + static_cast<int>(w), workers[w].apc, 100);
  if (const ComparedRun* other = view().comparison())
    apc_->setComparedData(compared_series_, other->store_b.apcSeries(), 100, view().comparisonOffset(),
                          other->store_b.now());
  else
    apc_->clearSeriesData(compared_series_);
  if (lined_workers_ == 0 && !workers.empty()) {
    std::vector<std::vector<EnvelopeColumn>> envelopes;
    envelopes.reserve(workers.size());
    for (const auto& w : workers) envelopes.push_back(apc_->envelopeOf(w.apc, 100));
    apc_->setBand(tr("band: %1 workers (min/median/max)").arg(workers.size()), workerBand(envelopes),
                  QColor(120, 160, 210));
  }
  apc_->setMarkers(knobMarkers(store, view()));
  // The summary sorts its samples: four times a second is as often as anyone reads them.
  if (since_tables_.isValid() && since_tables_.elapsed() < 250 && !store.finished()) return;
  since_tables_.start();
  refreshTables(store);
}

void LabMetricsPanel::refreshTables(const TelemetryStore& store) {
  const LabMetrics m = store.summary().lab;
  QStringList parts;
  parts << tr("APC %1 (an unbounded cache: %2 within sessions, %3 across)")
               .arg(percent(m.apc), percent(m.apc_ceiling_intra), percent(m.apc_ceiling_any));
  if (m.tpot_s)
    parts << tr("TPOT p50 %1 ms, p90 %2 ms").arg(m.tpot_s->p50 * 1000, 0, 'f', 1).arg(m.tpot_s->p90 * 1000, 0, 'f', 1);
  parts << tr("worker TTFT p90 median %1 s, max %2 s")
               .arg(seconds(m.worker_ttft_p90_median_s), seconds(m.worker_ttft_p90_max_s));
  if (m.request_balance) parts << tr("requests max/min %1x").arg(*m.request_balance, 0, 'f', 2);
  if (m.completion_rate) parts << tr("completed %1 of the workload").arg(percent(m.completion_rate));
  if (m.decode_tps) parts << tr("decode %1 tokens/s").arg(*m.decode_tps, 0, 'f', 1);
  const QString text = parts.join(QStringLiteral(" · "));
  if (headline_->text() != text) headline_->setText(text);

  ecdf_->setQuantiles(m.uncached_quantiles);
  by_turn_->setRates(m.apc_by_turn, LabMetrics::kMaxTurnIndex);
  int row = 0;
  for (const char* name : {"WARM", "MEDIUM", "HEAVY"}) {
    const auto it = m.request_classes.find(name);
    setCell(*classes_, row, 0, QString::fromLatin1(name));
    setCell(*classes_, row, 1, it == m.request_classes.end() ? QStringLiteral("-") : QString::number(it->second.count));
    setCell(*classes_, row, 2, it == m.request_classes.end() ? QStringLiteral("-") : seconds(it->second.ttft_p90_s));
    setCell(*classes_, row, 3, it == m.request_classes.end() ? QStringLiteral("-") : seconds(it->second.e2e_p90_s));
    ++row;
  }
  const auto& workers = store.workers();
  if (workers_->rowCount() != static_cast<int>(workers.size())) workers_->setRowCount(static_cast<int>(workers.size()));
  for (std::size_t w = 0; w < workers.size(); ++w) {
    const int r = static_cast<int>(w);
    setCell(*workers_, r, 0, QString::fromStdString(workers[w].info.name));
    setCell(*workers_, r, 1,
            w < m.worker_completed.size() ? QString::number(m.worker_completed[w]) : QStringLiteral("0"));
    setCell(*workers_, r, 2, w < m.worker_ttft_p90_s.size() ? seconds(m.worker_ttft_p90_s[w]) : QStringLiteral("-"));
    setCell(
        *workers_, r, 3,
        !workers[w].hits.empty() ? QString::number(workers[w].hits.rate() * 100, 'f', 1) + "%" : QStringLiteral("-"));
  }
}

}  // namespace kvscope
