// An operator's notes on a recorded run (core/run/RunNotes): kept in time order, written beside the
// recording whole or not at all, read back the same, and a bad notes file named with its field.
#include <QtTest>

#include <QTemporaryDir>
#include <fstream>

#include "core/model/Error.h"
#include "core/run/RunNotes.h"

using namespace kvscope;

class TestRunNotes : public QObject {
  Q_OBJECT
 private slots:
  void keptInTimeOrder() {
    RunNotes n;
    std::string error;
    QVERIFY(n.add({secondsToTime(812), "D2 cold from here"}, &error));
    QVERIFY(n.add({secondsToTime(30), "burst"}, &error));
    QVERIFY(n.add({secondsToTime(812), "second note at 812"}, &error));
    QCOMPARE(n.notes().size(), std::size_t(3));
    QCOMPARE(n.notes()[0].text, std::string("burst"));
    QCOMPARE(n.notes()[2].text, std::string("second note at 812"));  // after the earlier one at 812
    QVERIFY(!n.add({secondsToTime(1), "   "}, &error));
    QVERIFY(error.find("needs a text") != std::string::npos);
    QVERIFY(!n.add({-1, "before the run"}, &error));
    QVERIFY(!n.add({0, std::string(RunNotes::kMaxText + 1, 'x')}, &error));
    QVERIFY(n.remove(0));
    QVERIFY(!n.remove(7));
    QCOMPARE(n.notes().front().time, secondsToTime(812));
  }

  void besideTheRecordingAndBack() {
    QTemporaryDir dir;
    const std::string rec = dir.filePath("run.kvrec").toStdString();
    QVERIFY(RunNotes::loadFor(rec).empty());  // no notes file: no notes
    RunNotes n;
    QVERIFY(n.add({secondsToTime(812.25), "D2 \"cold\"\nsecond line"}, nullptr));
    QVERIFY(n.add({0, "ünïcode ok"}, nullptr));
    std::string error;
    QVERIFY2(n.saveFor(rec, &error), error.c_str());
    QCOMPARE(RunNotes::pathFor(rec), rec + ".notes.json");
    QVERIFY(RunNotes::loadFor(rec).notes() == n.notes());
  }

  void badFilesNameTheField_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("syntax") << "{\"notes\": [\n{\"time_s\": 1,}]}"
                            << "n.json:2: invalid JSON";
    QTest::newRow("no list") << "{\"note\": []}"
                             << "field 'notes'";
    QTest::newRow("no text") << "{\"notes\": [{\"time_s\": 1, \"text\": \"a\"}, {\"time_s\": 2}]}"
                             << "field 'notes[1]'";
    QTest::newRow("negative time") << "{\"notes\": [{\"time_s\": -5, \"text\": \"a\"}]}"
                                   << "field 'notes[0]': a note's time is seconds >= 0";
    QTest::newRow("twice") << "{\"notes\": [], \"notes\": []}"
                           << "field 'notes': given twice";
  }
  void badFilesNameTheField() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    try {
      RunNotes::parse(text.toStdString(), "n.json");
      QFAIL("no error");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains(expected), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestRunNotes)
#include "test_run_notes.moc"
