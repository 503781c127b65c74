// The what-if table beside the knobs: on a 64-D cluster it lists the workers the change moves most
// and sums the rest (not 64 share rows), and its caption says how far the run has moved since the
// fork, so an old promise is not read as a new one.
#include <QtTest>

#include <string>

#include "core/run/WhatIfPreview.h"
#include "widgets/knobs/WhatIfTable.h"

using namespace kvscope;

namespace {

// 64 D sharing the bindings evenly, but for D7 (1% -> 9%) and D40 (3% -> 1%) with the change.
WhatIfResult sixtyFourWorkers() {
  WhatIfResult r;
  r.from = secondsToTime(921);
  r.to = secondsToTime(1521);
  for (int d = 0; d < 64; ++d) {
    WorkerSummary w;
    w.id = "D" + std::to_string(d);
    w.role = "decode";
    w.share = d == 7 ? 0.01 : d == 40 ? 0.03 : (1.0 - 0.04) / 62;
    r.without.horizon.workers.push_back(w);
    w.share = d == 7 ? 0.09 : d == 40 ? 0.01 : (1.0 - 0.10) / 62;
    r.with.horizon.workers.push_back(w);
  }
  return r;
}

}  // namespace

class TestWhatIfTable : public QObject {
  Q_OBJECT
 private slots:
  void largeClustersShowTheTopMoversAndTheRestSummed() {
    const WhatIfResult r = sixtyFourWorkers();
    WhatIfTable table;
    table.setPreview(&r);
    const QStringList lines = table.text().split('\n');
    int share_rows = 0;
    for (const QString& l : lines) share_rows += l.contains(QStringLiteral(" share: "));
    QCOMPARE(share_rows, static_cast<int>(WhatIfTable::kMovers));
    QVERIFY2(lines.indexOf(QStringLiteral("D7 share: 1.0 % | 9.0 %")) >= 0, qPrintable(table.text()));
    QVERIFY2(lines.indexOf(QStringLiteral("D40 share: 3.0 % | 1.0 %")) >= 0, qPrintable(table.text()));
    // D7 moved most: it comes first.
    QVERIFY(table.text().indexOf(QStringLiteral("D7 share")) < table.text().indexOf(QStringLiteral("D40 share")));
    // The other 58 summed: the shares still add up to the whole.
    double sum_without = 0.01 + 0.03, sum_with = 0.09 + 0.01;
    for (const QString& l : lines) {
      if (!l.contains(QStringLiteral(" share: ")) || l.startsWith(QStringLiteral("D7 ")) ||
          l.startsWith(QStringLiteral("D40 ")))
        continue;
      sum_without += l.section(':', 1).section('|', 0, 0).remove('%').trimmed().toDouble() / 100;
      sum_with += l.section('|', 1).remove('%').trimmed().toDouble() / 100;
    }
    const int rest = lines.indexOf(QRegularExpression(QStringLiteral("^58 other D, summed: .*")));
    QVERIFY2(rest >= 0, qPrintable(table.text()));
    sum_without += lines[rest].section(':', 1).section('|', 0, 0).remove('%').trimmed().toDouble() / 100;
    sum_with += lines[rest].section('|', 1).remove('%').trimmed().toDouble() / 100;
    QVERIFY2(std::abs(sum_without - 1) < 0.005 && std::abs(sum_with - 1) < 0.005,
             qPrintable(QStringLiteral("%1 %2").arg(sum_without).arg(sum_with)));
  }

  void theCaptionSaysHowOldThePreviewIs() {
    const WhatIfResult r = sixtyFourWorkers();
    WhatIfTable table;
    table.setNow(r.from);
    table.setPreview(&r);
    QVERIFY(table.text().contains(QStringLiteral("from 921 s")));
    QVERIFY(!table.text().contains(QStringLiteral("moved")));
    table.setNow(secondsToTime(980));  // 59 s on: fresh enough to apply
    QVERIFY2(!table.text().contains(QStringLiteral("stale")), qPrintable(table.text()));
    table.setNow(secondsToTime(995));
    QVERIFY2(table.text().contains(QStringLiteral("the run has moved 74 s on since")), qPrintable(table.text()));
    // A tenth of the horizon on, Apply would refuse it: the caption says so first.
    QVERIFY2(table.text().contains(QStringLiteral("stale: Apply previews again from now")), qPrintable(table.text()));
  }
};

QTEST_MAIN(TestWhatIfTable)
#include "test_what_if_table.moc"
