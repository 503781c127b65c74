// SavedScrapeReader: the time lines a scrape loop writes, and what is not one.
#include <QtTest>

#include <QTemporaryDir>

#include <fstream>

#include "core/live/SavedScrapeReader.h"
#include "core/model/Error.h"

using namespace kvscope;

class TestSavedScrapes : public QObject {
  Q_OBJECT
 private slots:
  void timeLines() {
    // 2026-08-20 09:00:01 UTC is 1787216401 s since 1970 (python3: datetime(2026,8,20,9,0,1,tzinfo=utc).timestamp()).
    const std::int64_t t = 1787216401LL * 1'000'000;
    QCOMPARE(SavedScrapeReader::parseTimeLine("2026-08-20 09:00:01"), std::optional<std::int64_t>(t));
    QCOMPARE(SavedScrapeReader::parseTimeLine("2026-08-20T09:00:01.250"), std::optional<std::int64_t>(t + 250000));
    // `date -Iseconds`: the offset is dropped, the wall time kept (the logs print local time).
    QCOMPARE(SavedScrapeReader::parseTimeLine("2026-08-20T09:00:01+02:00"), std::optional<std::int64_t>(t));
    QCOMPARE(SavedScrapeReader::parseTimeLine("2026-08-20T09:00:01Z\r"), std::optional<std::int64_t>(t));
    QCOMPARE(SavedScrapeReader::parseTimeLine("1787216401"), std::optional<std::int64_t>(t));
    QCOMPARE(SavedScrapeReader::parseTimeLine("1787216401.000123"), std::optional<std::int64_t>(t + 123));
    for (const char* not_time :
         {"", "2026-08-20", "2026-13-20 09:00:01", "2026-08-20 09:00:01 x", "17872x", "sglang:num_running_reqs 3",
          "# TYPE x gauge", "-5", "2026-08-20 25:00:00", "09:04", "1787216401,5"})
      QVERIFY2(!SavedScrapeReader::parseTimeLine(not_time), not_time);
  }

  void scrapesOneAtATime() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("d0.prom").toStdString();
    std::ofstream(path)
        << "\n2026-08-20 09:00:01\nsglang:num_running_reqs 3\n\n2026-08-20 09:00:02\nsglang:num_running_reqs 4\n";
    SavedScrapeReader r(path);
    auto a = r.next();
    QVERIFY(a);
    QCOMPARE(a->line, 2L);
    QCOMPARE(a->body, std::string("sglang:num_running_reqs 3\n\n"));
    auto b = r.next();
    QVERIFY(b);
    QCOMPARE(b->time_us - a->time_us, std::int64_t(1'000'000));
    QCOMPARE(b->body, std::string("sglang:num_running_reqs 4\n"));
    QVERIFY(!r.next());
    QCOMPARE(r.scrapes(), 2L);
    std::ofstream(path) << "sglang:num_running_reqs 3\n";
    SavedScrapeReader bad(path);
    QVERIFY_THROWS_EXCEPTION(InputError, bad.next());
    QVERIFY_THROWS_EXCEPTION(InputError, SavedScrapeReader(dir.filePath("missing").toStdString()));
  }
};

QTEST_GUILESS_MAIN(TestSavedScrapes)
#include "test_saved_scrapes.moc"
