// Recordings whose frames repeat or go back - a duplicated 64 KB chunk, two
// recordings joined, one frame whose time was changed (checksum recomputed, so it is valid) - read
// as the recording they came from: the stray frames are skipped and reported, `report` (RecordingPlayer
// + RunAnalysis, what the command runs) counts what the run did, and seek works on the rest.
#include <QtTest>

#include <fstream>

#include "backend/recording/EventRecorder.h"
#include "backend/recording/KvrecReader.h"
#include "backend/recording/RecordingPlayer.h"
#include "core/metrics/RunAnalysis.h"
#include "core/run/SimulationRun.h"

using namespace kvscope;

namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct Played {
  long total = 0;  // requests
  std::uint64_t events = 0;
  std::vector<std::string> problems;
  bool mentions(const std::string& what) const {
    for (const auto& p : problems)
      if (p.find(what) != std::string::npos) return true;
    return false;
  }
};

Played play(const std::string& path) {
  RecordingPlayer player(path);
  RunAnalysis analysis;
  Played p;
  p.events = player.play(analysis);
  p.total = analysis.summary().total;
  p.problems = player.damage().problems;
  return p;
}

// Every data frame's offset, seq and time, in file order.
std::vector<KvrecFrame> framesOf(const std::string& path) {
  std::string error;
  auto r = KvrecReader::open(path, &error);
  if (!r) qFatal("%s", error.c_str());
  std::vector<KvrecFrame> out;
  KvrecFrame f;
  while (r->next(f)) out.push_back(f);
  return out;
}

// Rewrites the time of the frame at `offset` and its checksum: a valid frame, out of time order.
void setFrameTime(std::string& bytes, std::uint64_t offset, std::int64_t time_us) {
  auto* p = reinterpret_cast<unsigned char*>(bytes.data()) + offset;
  kvrec::putI64(p + 16, time_us);
  const std::uint32_t length = kvrec::getU32(p + 4);
  kvrec::putU32(p + 25,
                kvrec::frameChecksum(p, std::string_view(bytes.data() + offset + kKvrecFrameHeaderSize, length)));
}

}  // namespace

class TestKvrecOrder : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    path_ = dir_.filePath("run.kvrec").toStdString();
    EventRecorder recorder(path_);
    SimulationOptions o;
    o.duration_s = 1800;
    o.sinks.push_back(&recorder);
    runSimulation(Scenario::load("e3-load-floor"), o);
    std::string error;
    QVERIFY2(recorder.close(&error), error.c_str());
    original_ = play(path_);
    QVERIFY(original_.problems.empty());
    QVERIFY(original_.total > 100);
    QVERIFY(readAll(path_).size() > 4 * 65536);
  }

  void aDuplicatedChunkIsSkipped() {
    std::string bytes = readAll(path_);
    const std::size_t at = 2 * 65536;
    bytes.insert(at, bytes.substr(65536, 65536));  // the second 64 KB chunk, written twice
    const std::string dup = dir_.filePath("dup.kvrec").toStdString();
    writeAll(dup, bytes);
    const Played p = play(dup);
    QCOMPARE(p.total, original_.total);
    QCOMPARE(p.events, original_.events);
    QVERIFY2(p.mentions("repeat or go back from seq"), p.problems.empty() ? "no problem" : p.problems[0].c_str());
  }

  void joinedRecordingsReadAsTheFirst() {
    const std::string bytes = readAll(path_);
    const std::string joined = dir_.filePath("joined.kvrec").toStdString();
    writeAll(joined, bytes + bytes);
    const Played p = play(joined);
    QCOMPARE(p.total, original_.total);
    QCOMPARE(p.events, original_.events);
    QVERIFY(p.mentions("another recording starts at byte " + std::to_string(bytes.size())));
  }

  void aFrameGoingBackInTimeIsSkippedAndSeekWorks() {
    const auto frames = framesOf(path_);
    QVERIFY(frames.size() > 100);
    std::string bytes = readAll(path_);
    const std::size_t mid = frames.size() / 2;
    setFrameTime(bytes, frames[mid].offset, frames[mid - 1].time_us - 1'000'000);  // a second back
    setFrameTime(bytes, frames.back().offset, -5);  // and the last frame before the start
    // Without its index (as after a crash), the reader's own scan decides the times.
    bytes.resize(bytes.size() - kKvrecTrailerSize);
    const std::string back = dir_.filePath("back.kvrec").toStdString();
    writeAll(back, bytes);
    const Played p = play(back);
    QVERIFY(p.mentions("go back in time"));
    QCOMPARE(p.events, original_.events - 2);

    std::string error;
    auto r = KvrecReader::open(back, &error);
    QVERIFY2(r, error.c_str());
    QCOMPARE(r->firstTime(), frames.front().time_us);
    QCOMPARE(r->lastTime(), frames[frames.size() - 2].time_us);
    // Seek lands at or before its target everywhere in [first, last], and reads on in order.
    for (int i = 1; i < 10; ++i) {
      const std::int64_t t = r->firstTime() + (r->lastTime() - r->firstTime()) * i / 10;
      r->seek(t);
      KvrecFrame f;
      QVERIFY(r->next(f));
      QVERIFY(f.time_us <= t);
      std::int64_t last = f.time_us;
      while (r->next(f)) {
        QVERIFY(f.time_us >= last);
        last = f.time_us;
      }
    }
  }

  // A frame far ahead of its neighbours: the frames after it are not all lost.
  void aFrameAheadOfItsNeighboursCostsNothingElse() {
    const auto frames = framesOf(path_);
    std::string bytes = readAll(path_);
    const std::size_t mid = frames.size() / 3;
    setFrameTime(bytes, frames[mid].offset, frames.back().time_us * 100);
    const std::string ahead = dir_.filePath("ahead.kvrec").toStdString();
    writeAll(ahead, bytes);
    const Played p = play(ahead);
    QCOMPARE(p.events, original_.events);
    QVERIFY(p.mentions("was ahead of its neighbours"));
  }

 private:
  QTemporaryDir dir_;
  std::string path_;
  Played original_;
};

QTEST_GUILESS_MAIN(TestKvrecOrder)
#include "test_kvrec_order.moc"
