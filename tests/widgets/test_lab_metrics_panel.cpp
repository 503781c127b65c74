// The Lab metrics panel on a real run: every figure shows the summary's own numbers (the ECDF's
// percentiles, the hit rate by turn, the class table, each worker's TTFT p90), and the APC chart
// draws the store's windowed series, within [0, 100] %, one line per worker below the band's limit.
#include <QtTest>

#include <QLabel>
#include <QTableWidget>

#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"
#include "widgets/charts/LabMetricsPanel.h"
#include "widgets/charts/LabPlots.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/ViewState.h"

using namespace kvscope;

class TestLabMetricsPanel : public QObject {
  Q_OBJECT
 private slots:
  void showsTheSummarysNumbers() {
    test::EventLog log;
    SimulationOptions options;
    options.duration_s = 900;
    test::simulate("e3-load-floor", {}, options, &log);
    TelemetryStore store;
    store.ingest(log.events);
    ViewState view;
    view.setRange(0, store.now());
    LabMetricsPanel panel(view);
    panel.resize(500, 500);
    panel.show();
    panel.refreshNow(store);
    const LabMetrics m = store.summary().lab;
    QVERIFY(m.apc && m.uncached_tokens);

    QVERIFY2(panel.headline().text().contains(QString::number(*m.apc * 100, 'f', 1) + "%"),
             qPrintable(panel.headline().text()));
    QCOMPARE(panel.ecdf().quantiles().size(), std::size_t{101});
    QCOMPARE(panel.ecdf().quantiles()[50], m.uncached_tokens->p50);
    QCOMPARE(panel.ecdf().quantiles()[90], m.uncached_tokens->p90);
    QCOMPARE(panel.byTurn().rates(), m.apc_by_turn);
    QVERIFY(m.apc_by_turn.size() > 5);
    for (int row = 0; row < 3; ++row) {
      const std::string name = panel.classes().item(row, 0)->text().toStdString();
      QCOMPARE(panel.classes().item(row, 1)->text().toLong(), m.request_classes.at(name).count);
    }
    QCOMPARE(panel.workers().rowCount(), 3);
    for (int w = 0; w < 3; ++w)
      QCOMPARE(panel.workers().item(w, 2)->text(),
               QString::number(*m.worker_ttft_p90_s[static_cast<std::size_t>(w)], 'f', 3));

    // The chart: ceiling, all, then one line per worker; the "all" line is the store's series. Last,
    // a compared run's "all", which draws nothing with no run compared.
    TimeSeriesChart& chart = panel.apcChart();
    QCOMPARE(chart.seriesCount(), 2 + 3 + 1);
    QVERIFY(chart.drawnColumns(5).empty());
    const auto& all = chart.drawnColumns(1);
    const auto expected = chart.envelopeOf(store.apcSeries(), 100);
    QCOMPARE(all.size(), expected.size());
    int present = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      QCOMPARE(all[i].present, expected[i].present);
      if (!all[i].present) continue;
      ++present;
      QCOMPARE(all[i].lo, expected[i].lo);
      QVERIFY(all[i].lo >= 0 && all[i].hi <= 100);
      QVERIFY(chart.drawnColumns(0)[i].present);  // the ceiling is drawn wherever the rate is
    }
    QVERIFY(present > 50);
  }
};

QTEST_MAIN(TestLabMetricsPanel)
#include "test_lab_metrics_panel.moc"
