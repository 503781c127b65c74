// LogTailer on real files: from the end or the start, partial last lines held until their newline,
// rotation by rename (old file read to its end first), truncation in place, over-long lines cut,
// files that appear later, several files at once, and the polling thread with a writer rotating
// and truncating while it runs.
#include <QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>

#include "backend/live/LogTailer.h"

using namespace kvscope;

namespace {

struct Lines {
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::string>> got;
  std::vector<std::size_t> idle;
  LogTailer::LineHandler handler() {
    return [this](std::size_t f, std::string_view l) {
      std::lock_guard lock(mutex);
      got.emplace_back(f, std::string(l));
    };
  }
  LogTailer::IdleHandler idleHandler() {
    return [this](std::size_t f) {
      std::lock_guard lock(mutex);
      idle.push_back(f);
    };
  }
  QStringList texts() {
    std::lock_guard lock(mutex);
    QStringList out;
    for (const auto& [f, l] : got) out << QString::fromStdString(l);
    return out;
  }
};

void append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

TailOptions fast(bool from_start = false) {
  TailOptions o;
  o.from_start = from_start;
  o.poll_ms = 10;
  o.idle_ms = 0;
  return o;
}

}  // namespace

class TestLogTailer : public QObject {
  Q_OBJECT
 private slots:
  void fromEndOrStart() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("d0.log").toStdString();
    append(path, "old 1\nold 2\n");
    Lines end, start;
    LogTailer tail_end({path}, fast(false), end.handler());
    LogTailer tail_start({path}, fast(true), start.handler());
    tail_end.poll();
    tail_start.poll();
    QCOMPARE(end.texts(), QStringList());
    QCOMPARE(start.texts(), (QStringList{"old 1", "old 2"}));
    append(path, "new\n");
    tail_end.poll();
    tail_start.poll();
    QCOMPARE(end.texts(), QStringList{"new"});
    QCOMPARE(start.texts(), (QStringList{"old 1", "old 2", "new"}));
  }

  void partialLineHeldUntilNewline() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("d0.log").toStdString();
    append(path, "");
    Lines l;
    LogTailer tail({path}, fast(), l.handler());
    tail.poll();
    append(path, "Decode batch, #running");
    tail.poll();
    QCOMPARE(l.texts(), QStringList());
    append(path, "-req: 3\r\nnext");
    tail.poll();
    QCOMPARE(l.texts(), QStringList{"Decode batch, #running-req: 3"});
    append(path, "\n");
    tail.poll();
    QCOMPARE(l.texts(), (QStringList{"Decode batch, #running-req: 3", "next"}));
  }

  void rotationByRename() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("d0.log").toStdString();
    append(path, "");
    Lines l;
    LogTailer tail({path}, fast(), l.handler());
    tail.poll();
    append(path, "a\n");
    tail.poll();
    // logrotate: rename, the writer still finishes a line in the old file, then a new file appears.
    std::filesystem::rename(path, path + ".1");
    append(path + ".1", "b\nunfinished");
    append(path, "c\n");
    tail.poll();
    tail.poll();
    QCOMPARE(l.texts(), (QStringList{"a", "b", "unfinished", "c"}));
    QCOMPARE(tail.stats()[0].rotations, 1L);
    append(path, "d\n");
    tail.poll();
    QCOMPARE(l.texts().last(), QString("d"));
  }

  void truncationInPlace() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("d0.log").toStdString();
    append(path, "");
    Lines l;
    LogTailer tail({path}, fast(), l.handler());
    tail.poll();
    append(path, "a long first line\nsecond\nheld");
    tail.poll();
    std::filesystem::resize_file(path, 0);  // copytruncate
    append(path, "new\n");
    tail.poll();
    QCOMPARE(l.texts(), (QStringList{"a long first line", "second", "new"}));
    QCOMPARE(tail.stats()[0].truncations, 1L);
  }

  void overLongLinesAreCut() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("d0.log").toStdString();
    append(path, "");
    TailOptions o = fast();
    o.max_line_bytes = 10;
    Lines l;
    LogTailer tail({path}, o, l.handler());
    tail.poll();
    append(path, std::string(25, 'x') + "\nok\n" + std::string(12, 'y'));
    tail.poll();
    append(path, std::string(100000, 'y') + "\nlast\n");
    tail.poll();
    QCOMPARE(l.texts(), (QStringList{QString(10, 'x'), "ok", QString(10, 'y'), "last"}));
    QCOMPARE(tail.stats()[0].long_lines, 2L);
  }

  void missingFileAppearsLater() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("later.log").toStdString();
    Lines l;
    LogTailer tail({path}, fast(), l.handler());
    tail.poll();
    QVERIFY(!tail.stats()[0].open);
    QVERIFY(!tail.stats()[0].error.empty());
    append(path, "hello\n");  // a file that appears after tailing began is read from its start
    tail.poll();
    QCOMPARE(l.texts(), QStringList{"hello"});
    QVERIFY(tail.stats()[0].error.empty());
  }

  // A log path that is a FIFO nobody writes (item 7): refused with a reason, never waited
  // on, so the other files are still followed and stop() (SIGTERM) is not held up.
  void aFifoIsRefusedWithoutBlocking() {
    QTemporaryDir dir;
    const std::string fifo = dir.filePath("d0.log").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    const std::string path = dir.filePath("d1.log").toStdString();
    append(path, "");
    Lines l;
    LogTailer tail({fifo, path}, fast(true), l.handler());
    auto polled = std::async(std::launch::async, [&] {
      tail.poll();
      append(path, "still followed\n");
      tail.poll();
    });
    if (polled.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      const int unblock = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // let the blocked open return
      polled.wait();
      ::close(unblock);
      QFAIL("poll() blocked on a FIFO nobody writes");
    }
    QCOMPARE(l.texts(), QStringList{"still followed"});
    QVERIFY(!tail.stats()[0].open);
    QVERIFY2(tail.stats()[0].error.find("not a regular file") != std::string::npos, tail.stats()[0].error.c_str());
  }

  void severalFilesAndIdle() {
    QTemporaryDir dir;
    const std::string a = dir.filePath("p0.log").toStdString(), b = dir.filePath("d0.log").toStdString();
    append(a, "");
    append(b, "");
    Lines l;
    LogTailer tail({a, b}, fast(), l.handler(), l.idleHandler());
    tail.poll();
    append(a, "from p0\n");
    append(b, "from d0\n");
    tail.poll();
    QCOMPARE(l.got.size(), std::size_t(2));
    QCOMPARE(l.got[0], (std::pair<std::size_t, std::string>{0, "from p0"}));
    QCOMPARE(l.got[1], (std::pair<std::size_t, std::string>{1, "from d0"}));
    tail.poll();  // quiet now: each file that had data is idle once
    QCOMPARE(l.idle, (std::vector<std::size_t>{0, 1}));
    tail.poll();
    QCOMPARE(l.idle.size(), std::size_t(2));
  }

  // The polling thread while a writer appends, rotates and truncates: every line arrives once, in order.
  void threadWithRotatingWriter() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("d0.log").toStdString();
    append(path, "");
    Lines l;
    LogTailer tail({path}, fast(), l.handler());
    tail.start();
    QTRY_VERIFY(tail.stats()[0].open);
    QStringList expected;
    for (int i = 0; i < 300; ++i) {
      const std::string line = "line " + std::to_string(i);
      append(path, line + "\n");
      expected << QString::fromStdString(line);
      if (i == 100) {
        QTRY_COMPARE(l.texts().size(), expected.size());
        std::filesystem::rename(path, path + ".1");
      }
      if (i == 200) {
        QTRY_COMPARE(l.texts().size(), expected.size());
        std::filesystem::resize_file(path, 0);
        // Truncation shows as "smaller than what was read": a writer refilling past the old size
        // before the next poll would hide it (as from tail -F). Give the poll a moment.
        QTest::qWait(100);
      }
    }
    QTRY_COMPARE(l.texts(), expected);
    tail.stop();
    QCOMPARE(tail.stats()[0].rotations, 1L);
    QCOMPARE(tail.stats()[0].truncations, 1L);
  }
};

QTEST_GUILESS_MAIN(TestLogTailer)
#include "test_log_tailer.moc"
