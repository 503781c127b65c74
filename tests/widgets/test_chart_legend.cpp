// What a chart's legend and its forecast layers promise an operator: no series is ever dropped from
// the legend (what does not fit is "+N", named in its tooltip); a click hides or shows a series and
// Ctrl+click shows it alone; real data is never fainter than a preview's forecast, highlighted or
// not; the forecasts are named in the legend; a "now" line parts what happened from what is forecast.
#include <QtTest>

#include <QImage>
#include <QMouseEvent>

#include "core/telemetry/MinMaxSeries.h"
#include "widgets/charts/ChartLegend.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/ViewState.h"

using namespace kvscope;

namespace {

MinMaxSeries constant(double value, int to_s = 100) {
  MinMaxSeries s;
  for (int t = 0; t <= to_s; ++t) s.add(secondsToTime(t), value);
  return s;
}

// The point of the legend where `series`'s entry is (scanning the legend row), or (-1, -1).
QPoint entryOf(const TimeSeriesChart& chart, const QString& series) {
  const int y = 2 + chart.fontMetrics().height() / 2;
  for (int x = 0; x < chart.width(); ++x)
    if (chart.legend().seriesAt({x, y}) == series) return {x, y};
  return {-1, -1};
}

void click(TimeSeriesChart& chart, QPoint at, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  QTest::mouseClick(&chart, Qt::LeftButton, modifiers, at);
}

// How far a pixel is from the chart's background: the more opaque a layer, the farther.
int inkAt(const QImage& image, int x, int y, QColor base) {
  const QColor c = image.pixelColor(x, y);
  return std::abs(c.red() - base.red()) + std::abs(c.green() - base.green()) + std::abs(c.blue() - base.blue());
}

struct Chart {
  ViewState view;
  TimeSeriesChart chart{view, "KV use per D (%)"};
  explicit Chart(int width) {
    view.setRange(0, secondsToTime(100));
    chart.resize(width, 260);
    chart.setFixedYRange(0, 100);
    chart.show();
  }
};

}  // namespace

class TestChartLegend : public QObject {
  Q_OBJECT
 private slots:
  // 12 series on a narrow chart: D0 first, then as many as fit, then "+N" naming the rest.
  void aNarrowLegendFoldsTheRestIntoPlusN() {
    Chart c(420);
    QVERIFY(QTest::qWaitForWindowExposed(&c.chart));
    for (int i = 0; i < 12; ++i) {
      c.chart.addSeries(QStringLiteral("D%1").arg(i), Qt::blue);
      c.chart.setSeriesData(i, constant(10 + i));
    }
    c.chart.grab();  // lays the legend out
    const QStringList shown = c.chart.legend().shownTexts();
    QVERIFY2(shown.size() >= 2 && shown.front() == "D0", qPrintable(shown.join(',')));
    QVERIFY2(shown.back().startsWith('+'), qPrintable(shown.join(',')));
    const QStringList folded = c.chart.legend().folded();
    QCOMPARE(shown.back(), QStringLiteral("+%1").arg(folded.size()));
    QCOMPARE(shown.size() - 1 + folded.size(), 12);
    QCOMPARE(folded.back(), QStringLiteral("D11"));
    // Wide enough: every entry, no "+N".
    c.chart.resize(1600, 260);
    c.chart.grab();
    QCOMPARE(c.chart.legend().shownTexts().size(), 12);
    QVERIFY(c.chart.legend().folded().isEmpty());
  }

  void aClickHidesAndCtrlClickIsolates() {
    Chart c(900);
    QVERIFY(QTest::qWaitForWindowExposed(&c.chart));
    for (int i = 0; i < 3; ++i) {
      c.chart.addSeries(QStringLiteral("D%1").arg(i), Qt::blue);
      c.chart.setSeriesData(i, constant(10 + 10 * i));
    }
    c.chart.grab();
    const QPoint d1 = entryOf(c.chart, "D1");
    QVERIFY(d1.x() >= 0);
    click(c.chart, d1);
    QVERIFY(c.chart.isSeriesHidden("D1"));
    c.view.setCursorTime(secondsToTime(50));
    QCOMPARE(c.chart.cursorReadout(), (QStringList{"D0: 10", "D2: 30"}));  // a hidden series reads out nothing
    click(c.chart, d1);
    QVERIFY(!c.chart.isSeriesHidden("D1"));
    click(c.chart, entryOf(c.chart, "D2"), Qt::ControlModifier);
    QVERIFY(c.chart.isSeriesHidden("D0") && c.chart.isSeriesHidden("D1") && !c.chart.isSeriesHidden("D2"));
    click(c.chart, entryOf(c.chart, "D2"), Qt::ControlModifier);  // alone already: all again
    QVERIFY(!c.chart.isSeriesHidden("D0") && !c.chart.isSeriesHidden("D1") && !c.chart.isSeriesHidden("D2"));
    // A rebuilt series list (a new run, other lines) keeps what the operator hid, by name.
    click(c.chart, entryOf(c.chart, "D0"));
    c.chart.clearSeries();
    c.chart.addSeries("D0", Qt::blue);
    QVERIFY(c.chart.isSeriesHidden("D0"));
  }

  // D0 real at 20 %, its preview "with the change" at 80 %: the real line is drawn with more ink
  // than the forecast, both plain and while a finding about another worker fades D0.
  void realDataIsNeverFainterThanAForecast() {
    Chart c(700);
    QVERIFY(QTest::qWaitForWindowExposed(&c.chart));
    QColor red(0xd6, 0x27, 0x28);
    c.chart.addSeries("D0", red);
    c.chart.addSeries("D1", Qt::darkGreen);
    QColor ghost = red;
    ghost.setAlpha(160);  // as bright as WorkerChartPanel makes "with the change"
    c.chart.addSeries("D0 with the change", ghost, TimeSeriesChart::Style::Ghost, "D0");
    c.chart.setSeriesData(0, constant(20));
    c.chart.setSeriesData(1, constant(50));
    c.chart.setSeriesData(2, constant(80));
    const QColor base = c.chart.palette().color(QPalette::Base);
    const int x = c.chart.plotRect().center().x();
    for (const QStringList& highlighted : {QStringList{}, QStringList{"D1"}}) {
      c.view.highlightWorkers(highlighted);
      const QImage image = c.chart.grab().toImage();
      const int real = inkAt(image, x, c.chart.yOf(20), base), forecast = inkAt(image, x, c.chart.yOf(80), base);
      QVERIFY2(
          real > forecast && forecast > 0,
          qPrintable(
              QStringLiteral("highlight %1: real %2, forecast %3").arg(highlighted.join(',')).arg(real).arg(forecast)));
    }
    // Nothing highlighted any more (a finding deselected): D0 is drawn in full again.
    c.view.highlightWorkers({});
    const QImage image = c.chart.grab().toImage();
    QCOMPARE(image.pixelColor(x, c.chart.yOf(20)), red);
    // The forecast is named in the legend by what it is.
    QVERIFY2(c.chart.legend().shownTexts().contains("with the change"),
             qPrintable(c.chart.legend().shownTexts().join(',')));
  }

  // The run is at 60 s and the view goes to 100 s (a preview's look ahead): a solid line at 60 s.
  void aNowLineWhereTheViewShowsTheFuture() {
    Chart c(700);
    QVERIFY(QTest::qWaitForWindowExposed(&c.chart));
    c.chart.addSeries("D0", Qt::blue);
    c.chart.setSeriesData(0, constant(20, 60));
    const QColor text = c.chart.palette().color(QPalette::Text);
    const int x = c.chart.plotRect().left() + c.chart.grid().columnOf(secondsToTime(60));
    const int y = c.chart.yOf(50);
    QVERIFY(c.chart.grab().toImage().pixelColor(x, y) != text);  // no "now" known yet
    c.chart.setHoldUntil(secondsToTime(60));
    QCOMPARE(c.chart.grab().toImage().pixelColor(x, y), text);
    c.chart.setHoldUntil(secondsToTime(100));  // now at the right edge (following live): no line
    QVERIFY(c.chart.grab().toImage().pixelColor(x, y) != text);
  }
};

QTEST_MAIN(TestChartLegend)
#include "test_chart_legend.moc"
