// The .kvrec container on real files: round trip, seek, damage (flipped bytes, cut tails, bad
// headers, random corruption) and a writer killed with SIGKILL while recording.
#include <QtTest>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "backend/recording/KvrecReader.h"
#include "backend/recording/KvrecWriter.h"

using namespace kvscope;

namespace {

struct Frame {
  std::uint64_t seq = 0;
  std::int64_t time_us = 0;
  bool keyframe = false;
  std::string payload;
};

struct Written {
  std::vector<Frame> frames;
  std::vector<std::uint64_t> offsets;  // of each frame
  std::uint64_t data_end = 0;          // where the index frame begins
  std::uint64_t size = 0;
};

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// `count` frames: seq 10+2i (gaps, so seq is not the frame number), times that repeat now and then,
// payload sizes 0..120 with every byte value, a keyframe every `key_every` frames starting at `first_key`.
std::vector<Frame> makeFrames(int count, int key_every, int first_key, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Frame> frames;
  frames.reserve(static_cast<std::size_t>(count));
  std::int64_t t = 1'000;
  for (int i = 0; i < count; ++i) {
    Frame f;
    f.seq = 10 + 2 * static_cast<std::uint64_t>(i);
    t += static_cast<std::int64_t>(rng() % 4) * 5;  // 0 now and then: equal times are allowed
    f.time_us = t;
    f.keyframe = i >= first_key && (i - first_key) % key_every == 0;
    f.payload.resize(rng() % 121);
    for (auto& c : f.payload) c = static_cast<char>(rng());
    frames.push_back(std::move(f));
  }
  return frames;
}

// closed = false: the index frame and trailer are cut off, as after a crash between two frames.
Written writeRecording(const std::string& path, std::vector<Frame> frames, std::string_view metadata = "run meta",
                       bool closed = true) {
  Written w;
  std::string error;
  auto writer = KvrecWriter::create(path, metadata, &error);
  if (!writer) qFatal("create failed: %s", error.c_str());
  for (const auto& f : frames) {
    w.offsets.push_back(writer->bytes());
    if (!writer->append(f.seq, f.time_us, f.keyframe, f.payload)) qFatal("append: %s", writer->error().c_str());
  }
  w.data_end = writer->bytes();
  if (!writer->close(&error)) qFatal("close: %s", error.c_str());
  if (!closed) writeAll(path, readAll(path).substr(0, w.data_end));
  w.frames = std::move(frames);
  w.size = readAll(path).size();
  return w;
}

std::vector<KvrecFrame> readFrames(KvrecReader& r) {
  std::vector<KvrecFrame> out;
  KvrecFrame f;
  while (r.next(f)) out.push_back(f);
  return out;
}

bool sameFrame(const KvrecFrame& got, const Frame& want) {
  return got.seq == want.seq && got.time_us == want.time_us && got.keyframe == want.keyframe &&
         got.payload == want.payload;
}

QString problemsText(const KvrecReader& r) {
  QString s;
  for (const auto& p : r.problems()) s += q(p.message) + "\n";
  return s;
}

}  // namespace

class TestKvrec : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string path(const char* name) const { return dir_.filePath(QString::fromLatin1(name)).toStdString(); }

 private slots:
  void roundTrip() {
    const std::string p = path("round.kvrec");
    const std::string metadata("header\0proto\xff", 13);
    const auto w = writeRecording(p, makeFrames(100'000, 97, 0, 1), metadata);

    std::string error;
    auto r = KvrecReader::open(p, &error);
    QVERIFY2(r, error.c_str());
    QCOMPARE(r->metadata(), metadata);
    QVERIFY2(r->problems().empty(), qPrintable(problemsText(*r)));
    QVERIFY(!r->stats().index_rebuilt);
    QCOMPARE(r->stats().frames, std::uint64_t(100'000));
    QCOMPARE(r->firstTime(), w.frames.front().time_us);
    QCOMPARE(r->lastTime(), w.frames.back().time_us);

    const auto got = readFrames(*r);
    QCOMPARE(got.size(), w.frames.size());
    std::vector<KvrecIndexEntry> expected_index;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!sameFrame(got[i], w.frames[i])) QFAIL(qPrintable(QString("frame %1 differs").arg(i)));
      QCOMPARE(got[i].offset, w.offsets[i]);
      if (w.frames[i].keyframe) expected_index.push_back({w.frames[i].time_us, w.frames[i].seq, w.offsets[i]});
    }
    QCOMPARE(expected_index.size(), std::size_t(1031));  // ceil(100000 / 97)
    QVERIFY(r->keyframes() == expected_index);
    QCOMPARE(r->stats().keyframes, std::uint64_t(expected_index.size()));
    QVERIFY(r->problems().empty());
  }

  void emptyRecording() {
    const std::string p = path("noframes.kvrec");
    writeRecording(p, {});
    std::string error;
    auto r = KvrecReader::open(p, &error);
    QVERIFY2(r, error.c_str());
    KvrecFrame f;
    QVERIFY(!r->next(f));
    QVERIFY(r->problems().empty());
    QCOMPARE(r->stats().frames, std::uint64_t(0));
    r->seek(123);
    QVERIFY(!r->next(f));
  }

  // Frames at 1000 + 10 i, keyframes at frames 50, 150, ..., 950 (times 1500, 2500, ..., 10500).
  void seek_data() {
    QTest::addColumn<bool>("closed");  // false: no trailer, the index is rebuilt by a scan
    QTest::addColumn<qint64>("time");
    QTest::addColumn<int>("frame");  // expected first frame after the seek
    for (bool closed : {true, false}) {
      const char* how = closed ? "index" : "rebuilt";
      QTest::addRow("%s: before the first frame", how) << closed << qint64(-5) << 0;
      QTest::addRow("%s: before the first keyframe", how) << closed << qint64(1499) << 0;
      QTest::addRow("%s: at the first keyframe", how) << closed << qint64(1500) << 50;
      QTest::addRow("%s: between keyframes", how) << closed << qint64(4777) << 350;
      QTest::addRow("%s: just before a keyframe", how) << closed << qint64(6499) << 450;
      QTest::addRow("%s: at the last keyframe", how) << closed << qint64(10500) << 950;
      QTest::addRow("%s: after the last frame", how) << closed << qint64(1'000'000) << 950;
    }
  }

  void seek() {
    QFETCH(bool, closed);
    QFETCH(qint64, time);
    QFETCH(int, frame);
    std::vector<Frame> frames;
    for (int i = 0; i < 1000; ++i)
      frames.push_back({std::uint64_t(i), 1000 + 10 * i, i % 100 == 50, "payload-" + std::to_string(i)});
    const std::string p = path(closed ? "seek.kvrec" : "seek-open.kvrec");
    writeRecording(p, frames, "m", closed);
    std::string error;
    auto r = KvrecReader::open(p, &error);
    QVERIFY2(r, error.c_str());
    QCOMPARE(r->stats().index_rebuilt, !closed);
    QCOMPARE(r->keyframes().size(), std::size_t(10));
    QCOMPARE(r->firstTime(), qint64(1000));
    QCOMPARE(r->lastTime(), qint64(1000 + 9990));

    const auto k = r->keyframeAtOrBefore(time);
    QCOMPARE(k.has_value(), frame != 0);
    if (k) QCOMPARE(k->seq, std::uint64_t(frame));
    // Read a little, seek, and the next frame is the expected one; then reading continues in order.
    KvrecFrame f;
    for (int i = 0; i < 7; ++i) QVERIFY(r->next(f));
    r->seek(time);
    QVERIFY(r->next(f));
    QCOMPARE(f.seq, std::uint64_t(frame));
    QCOMPARE(f.keyframe, frame != 0);
    QVERIFY(r->next(f));
    QCOMPARE(f.seq, std::uint64_t(frame + 1));
    QCOMPARE(f.payload, std::string_view("payload-" + std::to_string(frame + 1)));
  }

  // One byte of frame 500 changed; where in the frame decides whether its seq can be believed.
  void flippedByte_data() {
    QTest::addColumn<int>("at");  // offset within the frame
    QTest::addColumn<bool>("seqKnown");
    QTest::addColumn<bool>("closed");
    for (bool closed : {true, false}) {
      const char* how = closed ? "closed" : "not closed";
      QTest::addRow("%s: payload", how) << 40 << true << closed;
      QTest::addRow("%s: checksum", how) << 26 << true << closed;
      QTest::addRow("%s: flags", how) << 24 << true << closed;
      QTest::addRow("%s: time", how) << 17 << true << closed;
      QTest::addRow("%s: length", how) << 4 << true << closed;  // longer by one: checksum fails
      QTest::addRow("%s: seq", how) << 8 << false << closed;    // the seq read is out of order
      QTest::addRow("%s: sync marker", how) << 1 << false << closed;
      QTest::addRow("%s: length over the limit", how) << 7 << false << closed;
    }
  }

  void flippedByte() {
    QFETCH(int, at);
    QFETCH(bool, seqKnown);
    QFETCH(bool, closed);
    std::vector<Frame> frames;
    for (int i = 0; i < 1000; ++i)
      frames.push_back({std::uint64_t(i), 100 * i, i % 100 == 0, "event payload number " + std::to_string(i)});
    const std::string p = path("flipped.kvrec");
    const auto w = writeRecording(p, frames, "m", closed);
    std::string bytes = readAll(p);
    const std::uint64_t bad = w.offsets[500];
    bytes[bad + static_cast<std::uint64_t>(at)] ^= at == 4 ? 0x01 : (at == 7 ? 0x40 : 0x5a);
    writeAll(p, bytes);

    std::string error;
    auto r = KvrecReader::open(p, &error);
    QVERIFY2(r, error.c_str());
    auto got = readFrames(*r);
    QCOMPARE(got.size(), std::size_t(999));
    for (std::size_t i = 0, j = 0; i < frames.size(); ++i) {
      if (i == 500) continue;
      QVERIFY2(sameFrame(got[j++], frames[i]), qPrintable(QString("frame %1").arg(i)));
    }
    const auto corrupt = std::count_if(r->problems().begin(), r->problems().end(), [](const KvrecProblem& pr) {
      return pr.kind == KvrecProblem::Kind::CorruptFrame;
    });
    QCOMPARE(corrupt, 1);
    const auto& pr = *std::find_if(r->problems().begin(), r->problems().end(),
                                   [](const KvrecProblem& x) { return x.kind == KvrecProblem::Kind::CorruptFrame; });
    QCOMPARE(pr.offset, bad);
    QCOMPARE(pr.seq.has_value(), seqKnown);
    if (seqKnown) QCOMPARE(*pr.seq, std::uint64_t(500));
    QCOMPARE(pr.skipped_bytes, w.offsets[501] - bad);
    QCOMPARE(pr.skipped_frames, std::uint64_t(1));
    const QString m = q(pr.message);
    QVERIFY2(m.contains(q(p)) && m.contains(QString("byte %1").arg(bad)), qPrintable(m));
    if (seqKnown) QVERIFY2(m.contains("seq 500"), qPrintable(m));
    QCOMPARE(r->stats().skipped_frames, std::uint64_t(1));
    QCOMPARE(r->stats().skipped_bytes, w.offsets[501] - bad);
    // Frame 500 was a keyframe: the index written at close still has it, a rebuilt one cannot.
    QCOMPARE(r->keyframes().size(), std::size_t(closed ? 10 : 9));

    // Reading again reports nothing new; a seek across the damage still works.
    const auto problems = r->problems().size();
    r->rewind();
    QCOMPARE(readFrames(*r).size(), std::size_t(999));
    QCOMPARE(r->problems().size(), problems);
    r->seek(100 * 450);
    KvrecFrame f;
    for (int i = 400; i < 500; ++i) QVERIFY(r->next(f));
    QCOMPARE(f.seq, std::uint64_t(499));
    QVERIFY(r->next(f));
    QCOMPARE(f.seq, std::uint64_t(501));
    QCOMPARE(r->stats().skipped_frames, std::uint64_t(1));
  }

  // A closed recording cut at various points: every complete frame is read and the cut is reported.
  void truncatedTail_data() {
    QTest::addColumn<QString>("cut");
    QTest::newRow("inside a payload") << "payload";
    QTest::newRow("inside a frame header") << "header";
    QTest::newRow("just after the sync marker") << "marker";
    QTest::newRow("at a frame boundary") << "boundary";
    QTest::newRow("inside the index frame") << "index";
    QTest::newRow("inside the trailer") << "trailer";
    QTest::newRow("after the index frame") << "noTrailer";
    QTest::newRow("right after the header") << "headerOnly";
  }

  void truncatedTail() {
    QFETCH(QString, cut);
    const std::string p = path("cut.kvrec");
    const auto w = writeRecording(p, makeFrames(2000, 50, 3, 7));
    const std::string full = readAll(p);
    const std::uint64_t data_begin = w.offsets[0];
    // The file's new size, where the reader must say the recording ends, and the frames left whole.
    struct Cut {
      std::uint64_t size, tail;
      int complete;
    };
    const std::map<QString, Cut> cuts{
        {"payload", {w.offsets[1234] + 29 + w.frames[1234].payload.size() / 2, w.offsets[1234], 1234}},
        {"header", {w.offsets[777] + 13, w.offsets[777], 777}},
        {"marker", {w.offsets[1500] + 4, w.offsets[1500], 1500}},
        {"boundary", {w.offsets[1999], w.offsets[1999], 1999}},
        {"index", {w.data_end + 40, w.data_end, 2000}},
        {"trailer", {w.size - 5, w.size - 16, 2000}},
        {"noTrailer", {w.size - 16, w.size - 16, 2000}},
        {"headerOnly", {data_begin, data_begin, 0}},
    };
    QVERIFY(w.frames[1234].payload.size() >= 2);
    const auto [size, tail, complete] = cuts.at(cut);
    writeAll(p, full.substr(0, size));

    std::string error;
    auto r = KvrecReader::open(p, &error);
    QVERIFY2(r, error.c_str());
    QVERIFY(r->stats().index_rebuilt);
    QVERIFY(r->stats().truncated);
    QCOMPARE(r->stats().truncated_at, tail);
    QCOMPARE(r->problems().size(), std::size_t(1));
    const auto& pr = r->problems().front();
    QCOMPARE(int(pr.kind), int(KvrecProblem::Kind::TruncatedTail));
    QCOMPARE(pr.offset, tail);
    QVERIFY2(q(pr.message).contains(QString("truncated tail at byte %1").arg(tail)) && q(pr.message).contains(q(p)),
             pr.message.c_str());

    const auto got = readFrames(*r);
    QCOMPARE(int(got.size()), complete);
    for (int i = 0; i < complete; ++i) QVERIFY(sameFrame(got[std::size_t(i)], w.frames[std::size_t(i)]));
    QCOMPARE(r->stats().frames, std::uint64_t(complete));
    std::size_t keys = 0;
    for (int i = 0; i < complete; ++i) keys += w.frames[std::size_t(i)].keyframe;
    QCOMPARE(r->keyframes().size(), keys);
    QCOMPARE(r->problems().size(), std::size_t(1));  // reading did not report the cut again
    if (complete > 0) QCOMPARE(r->lastTime(), w.frames[std::size_t(complete - 1)].time_us);
  }

  void badFile_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("missing file") << "missing" << QStringList{"no such file"};
    QTest::newRow("directory") << "directory" << QStringList{"directory"};
    QTest::newRow("empty file") << "empty" << QStringList{"empty file"};
    QTest::newRow("text file") << "text" << QStringList{"not a KVScope recording", "text file", "time,worker"};
    QTest::newRow("binary junk") << "junk" << QStringList{"not a KVScope recording", "\\x00"};
    QTest::newRow("magic only") << "magic" << QStringList{"truncated header", "8 bytes"};
    QTest::newRow("half the magic") << "halfMagic" << QStringList{"truncated header"};
    QTest::newRow("metadata cut") << "metadataCut" << QStringList{"truncated header", "1000 of run metadata"};
    QTest::newRow("header checksum wrong") << "checksum" << QStringList{"corrupt header", "checksum"};
    QTest::newRow("metadata length huge") << "hugeLength" << QStringList{"corrupt header", "metadata length"};
    QTest::newRow("unsupported version") << "version" << QStringList{"unsupported", "version 2", "reads version 1"};
    QTest::newRow("wild version") << "wildVersion" << QStringList{"corrupt header", "version"};
  }

  void badFile() {
    QFETCH(QString, kind);
    QFETCH(QStringList, mentions);
    const std::string p = path("bad.kvrec");
    QFile::remove(q(p));
    QDir(q(p)).removeRecursively();
    const std::string good = [&] {
      const std::string g = path("good.kvrec");
      writeRecording(g, makeFrames(10, 5, 0, 3), std::string(1000, 'm'));
      return readAll(g);
    }();
    std::string bytes = good;
    if (kind == "directory") QDir().mkpath(q(p));
    if (kind == "empty") bytes.clear();
    if (kind == "text") bytes = "time,worker,tokens\n1,2,3\n";
    if (kind == "junk") bytes = std::string("\0\1\2\3\4\5\6\7\10\11", 10) + good;
    if (kind == "magic") bytes = good.substr(0, 8);
    if (kind == "halfMagic") bytes = good.substr(0, 4);
    if (kind == "metadataCut") bytes = good.substr(0, 500);
    if (kind == "checksum") bytes[100] ^= 1;  // inside the metadata
    if (kind == "hugeLength") bytes[15] = '\x7f';
    if (kind == "version") bytes[8] = 2;
    if (kind == "wildVersion") bytes[11] = '\x40';
    if (kind != "missing" && kind != "directory") writeAll(p, bytes);

    std::string error;
    auto r = KvrecReader::open(p, &error);
    QVERIFY(!r);
    QVERIFY2(q(error).contains(q("'" + p + "'")), error.c_str());
    for (const auto& m : mentions)
      QVERIFY2(q(error).contains(m), qPrintable(QString("no '%1' in: %2").arg(m, q(error))));
    QFile::remove(q(p));
    QDir(q(p)).removeRecursively();
  }

  void writerRejectsBadFrames() {
    const std::string p = path("rejects.kvrec");
    std::string error;
    auto w = KvrecWriter::create(p, "m", &error);
    QVERIFY2(w, error.c_str());
    QVERIFY(w->append(1, 100, true, "a"));
    QVERIFY(!w->append(2, 99, false, "b"));
    QVERIFY2(q(w->error()).contains("earlier") && q(w->error()).contains(q(p)), w->error().c_str());
    QVERIFY(!w->append(3, 200, false, std::string(kKvrecMaxPayload + 1, 'x')));
    QVERIFY2(q(w->error()).contains("limit"), w->error().c_str());
    QVERIFY(w->append(4, 100, false, "c"));  // a rejected frame does not break the recording
    QVERIFY(w->close(&error));
    QVERIFY(!w->append(5, 300, false, "d"));
    auto r = KvrecReader::open(p, &error);
    QVERIFY2(r, error.c_str());
    const auto got = readFrames(*r);
    QCOMPARE(got.size(), std::size_t(2));
    QCOMPARE(got[1].seq, std::uint64_t(4));
    QVERIFY(r->problems().empty());

    QVERIFY(!KvrecWriter::create(path("no/such/dir/x.kvrec"), "m", &error));
    QVERIFY2(q(error).contains("no/such/dir/x.kvrec"), error.c_str());
  }

  // A child records ~1000 frames/s (so the one-second rule, not the 1 MiB one, flushes) until the
  // parent kills it. The file must open, hold a prefix of what was appended, and lose at most ~1 s.
  void writerKilled() {
    const std::string p = path("killed.kvrec");
    auto nowNs = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    const pid_t pid = fork();
    QVERIFY(pid >= 0);
    if (pid == 0) {
      std::string error;
      auto w = KvrecWriter::create(p, "killed run", &error);
      if (!w) _exit(2);
      const auto start = nowNs();
      for (std::uint64_t i = 0; nowNs() - start < 20'000'000'000; ++i) {  // never outlives a lost parent by much
        const auto t = nowNs();
        w->append(i, t / 1000, i % 100 == 0, "frame-" + std::to_string(i) + " wall_ns=" + std::to_string(t));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      _exit(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const auto killed_at = nowNs();
    QCOMPARE(kill(pid, SIGKILL), 0);
    int status = 0;
    QCOMPARE(waitpid(pid, &status, 0), pid);
    QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child did not die of SIGKILL");

    std::string error;
    auto r = KvrecReader::open(p, &error);
    QVERIFY2(r, error.c_str());
    QCOMPARE(r->metadata(), std::string("killed run"));
    QVERIFY(r->stats().truncated);
    QVERIFY(r->stats().index_rebuilt);
    QVERIFY(!r->problems().empty());
    QCOMPARE(int(r->problems().back().kind), int(KvrecProblem::Kind::TruncatedTail));
    const auto got = readFrames(*r);
    QVERIFY2(!got.empty(), "nothing reached the file in 1.5 s");
    std::int64_t last_wall = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      QCOMPARE(got[i].seq, std::uint64_t(i));
      const std::string prefix = "frame-" + std::to_string(i) + " wall_ns=";
      QVERIFY(got[i].payload.substr(0, prefix.size()) == prefix);
      last_wall = std::stoll(std::string(got[i].payload.substr(prefix.size())));
    }
    const double lost_s = double(killed_at - last_wall) / 1e9;
    qInfo("frames on disk: %zu, newest %.3f s before the kill", got.size(), lost_s);
    QVERIFY2(lost_s <= 1.0 + 0.4, qPrintable(QString("lost %1 s").arg(lost_s)));  // 0.4 s: scheduling slack
  }

  // Damage of every kind to a small closed recording: open + read + seek never crash, and every frame
  // read back is one that was written (checksums keep damaged bytes out).
  void randomDamage_data() {
    QTest::addColumn<int>("seed");
    for (int s = 1; s <= 5; ++s) QTest::addRow("seed %d", s) << s;
  }

  void randomDamage() {
    QFETCH(int, seed);
    const std::string p = path("fuzz.kvrec");
    const auto w = writeRecording(p, makeFrames(60, 8, 1, std::uint64_t(seed)), "fuzzed metadata");
    const std::string good = readAll(p);
    std::map<std::uint64_t, const Frame*> by_seq;
    for (const auto& f : w.frames) by_seq[f.seq] = &f;
    std::mt19937_64 rng(std::uint64_t(seed) * 7919);
    int opened = 0, damaged_reported = 0;
    for (int iter = 0; iter < 100; ++iter) {  // 5 seeds x 100 = 500 damaged files
      std::string bytes = good;
      const int rounds = 1 + int(rng() % 3);
      for (int k = 0; k < rounds; ++k) {
        switch (rng() % 4) {
          case 0:  // flip a few bytes
            for (int n = 1 + int(rng() % 4); n > 0 && !bytes.empty(); --n)
              bytes[rng() % bytes.size()] ^= char(1 + rng() % 255);
            break;
          case 1:  // cut
            bytes.resize(rng() % (bytes.size() + 1));
            break;
          case 2: {  // insert garbage
            std::string junk(1 + rng() % 64, '\0');
            for (auto& c : junk) c = char(rng());
            bytes.insert(rng() % (bytes.size() + 1), junk);
            break;
          }
          default: {  // duplicate a slice (whole frames repeated, a sync marker in the wrong place)
            if (bytes.empty()) break;
            const auto from = rng() % bytes.size();
            const auto len = std::min<std::size_t>(1 + rng() % 200, bytes.size() - from);
            bytes.insert(rng() % (bytes.size() + 1), bytes.substr(from, len));
          }
        }
      }
      writeAll(p, bytes);
      std::string error;
      auto r = KvrecReader::open(p, &error);
      if (!r) {
        QVERIFY2(!error.empty() && q(error).contains(q(p)), error.c_str());
        continue;
      }
      ++opened;
      KvrecFrame f;
      while (r->next(f)) {
        QVERIFY(f.offset + 29 + f.payload.size() <= r->fileSize());
        auto it = by_seq.find(f.seq);
        QVERIFY2(it != by_seq.end() && sameFrame(f, *it->second),
                 qPrintable(QString("iteration %1: frame at byte %2 was never written").arg(iter).arg(f.offset)));
      }
      // Once everything is read, any change to a closed recording has been noticed.
      QVERIFY2(bytes == good || !r->problems().empty(),
               qPrintable(QString("iteration %1: damage unnoticed").arg(iter)));
      damaged_reported += !r->problems().empty();
      for (const auto& pr : r->problems()) QVERIFY(pr.offset <= r->fileSize() && !pr.message.empty());
      for (int s = 0; s < 5; ++s) {
        r->seek(static_cast<std::int64_t>(rng() % 3000));
        for (int n = 0; n < 5 && r->next(f); ++n) QVERIFY(by_seq.count(f.seq));
      }
    }
    qInfo("opened %d of 100 damaged files, %d of them with problems reported", opened, damaged_reported);
  }
};

QTEST_GUILESS_MAIN(TestKvrec)
#include "test_kvrec.moc"
