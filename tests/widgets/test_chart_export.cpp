// A chart's exports say what it draws: the visible CSV is the painted envelope, column by column
// (hidden series left out, the band with its median), the PNG is the chart, and a path that cannot
// be written is an error that leaves nothing behind. Ctrl+C in a table copies the selection, or
// the whole table with its header.
#include <QtTest>

#include <QClipboard>
#include <QImage>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>

#include "core/telemetry/MinMaxSeries.h"
#include "widgets/charts/ChartExport.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/TableCopy.h"
#include "widgets/common/ViewState.h"

using namespace kvscope;

namespace {
MinMaxSeries ramp() {  // 0, 1, ..., 100 over 0..100 s
  MinMaxSeries s;
  for (int t = 0; t <= 100; ++t) s.add(secondsToTime(t), t);
  return s;
}
}  // namespace

class TestChartExport : public QObject {
  Q_OBJECT
 private slots:
  void theCsvIsWhatTheChartDraws() {
    ViewState view;
    view.setRange(0, secondsToTime(100));
    TimeSeriesChart chart(view, "KV pool use (%)");
    chart.resize(600, 240);
    chart.addSeries("D0", Qt::blue);
    chart.addSeries("D1, hot", Qt::red);  // a name a CSV must quote
    chart.setSeriesData(0, ramp());
    chart.setSeriesData(1, ramp(), 2);
    chart.setBand("band: 5 other D (min/median/max)", {{true, 5, 1.0, 2.0, 3.0}}, Qt::gray);
    const QStringList lines = ChartExport::visibleCsv(chart).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.front(), QStringLiteral("series,from_s,to_s,min,max,median"));
    int d0 = 0, d1 = 0, band = 0;
    const ColumnGrid g = chart.grid();
    for (const QString& line : lines.mid(1)) {
      if (line.startsWith("D0,")) {
        const QStringList f = line.split(',');
        const int c = d0++;
        const EnvelopeColumn& col = chart.drawnColumns(0)[static_cast<std::size_t>(c)];
        QCOMPARE(f[1].toDouble(), timeToSeconds(g.columnStart(c)));
        QCOMPARE(f[3].toDouble(), col.lo);
        QCOMPARE(f[4].toDouble(), col.hi);
      } else if (line.startsWith("\"D1, hot\",")) {
        ++d1;
      } else if (line.startsWith("band: 5 other D")) {
        ++band;
        QVERIFY2(line.endsWith(",1,3,2"), qPrintable(line));
      }
    }
    int present = 0;
    for (const EnvelopeColumn& col : chart.drawnColumns(0)) present += col.present ? 1 : 0;
    QCOMPARE(d0, present);
    QCOMPARE(d1, present);
    QCOMPARE(band, 1);
    chart.setSeriesHidden("D0", true);
    QVERIFY(!ChartExport::visibleCsv(chart).contains("\nD0,"));
  }

  void pngAndCsvFilesWholeOrNothing() {
    ViewState view;
    view.setRange(0, secondsToTime(100));
    TimeSeriesChart chart(view, "KV");
    chart.resize(400, 200);
    chart.addSeries("D0", Qt::blue);
    chart.setSeriesData(0, ramp());
    QTemporaryDir dir;
    QString error;
    QVERIFY2(ChartExport::savePng(chart, dir.filePath("kv.png"), &error), qPrintable(error));
    QCOMPARE(QImage(dir.filePath("kv.png")).size(), QSize(400, 200));
    QVERIFY2(ChartExport::saveCsv(chart, dir.filePath("kv.csv"), &error), qPrintable(error));
    QFile csv(dir.filePath("kv.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly) && csv.readAll().startsWith("series,from_s"));
    QVERIFY(!ChartExport::saveCsv(chart, dir.filePath("no/such/dir/kv.csv"), &error));
    QVERIFY2(error.contains("no/such/dir"), qPrintable(error));
    QVERIFY(!QFile::exists(dir.filePath("no/such/dir/kv.csv")));
  }

  void ctrlCCopiesTheSelectionOrTheTable() {
    QStandardItemModel model(2, 3);
    model.setHorizontalHeaderLabels({"worker", "state", "KV use"});
    const char* cells[2][3] = {{"D0", "ok", "31.4 %"}, {"D1", "cold: 0\nbindings", "0.0 %"}};
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) model.setItem(r, c, new QStandardItem(cells[r][c]));
    QTableView table;
    table.setModel(&model);
    enableTableCopy(table);
    QCOMPARE(tableCopyText(table),
             QStringLiteral("worker\tstate\tKV use\nD0\tok\t31.4 %\nD1\tcold: 0 bindings\t0.0 %\n"));
    table.selectionModel()->select(model.index(1, 0), QItemSelectionModel::Select);
    table.selectionModel()->select(model.index(1, 2), QItemSelectionModel::Select);
    QTest::keyClick(&table, Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("D1\t0.0 %\n"));
  }
};

QTEST_MAIN(TestChartExport)
#include "test_chart_export.moc"
