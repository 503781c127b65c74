// The console end to end, offscreen: the real window with every panel, fed by the embedded
// simulation or a recording, steered through its own widgets.
#include <QAbstractItemModel>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "app/gui/ExportActions.h"
#include "app/gui/FindingAlert.h"
#include "app/gui/MainWindow.h"
#include "app/gui/NoteActions.h"
#include "app/gui/PanelDocks.h"
#include "app/gui/SessionRecorder.h"
#include "app/gui/ShortcutsDialog.h"
#include "app/gui/SourceFactory.h"
#include "backend/recording/KvrecReader.h"
#include "core/source/EmbeddedSimulationSource.h"
#include "tests/support/CliRunner.h"
#include "tests/support/ConsoleWindow.h"
#include "tests/support/SimHarness.h"
#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"
#include "widgets/diagnosis/DiagnosisPanel.h"
#include "widgets/knobs/KnobsPanel.h"
#include "widgets/runs/MarkedRunTableModel.h"
#include "widgets/runs/RunsDock.h"
#include "widgets/timeline/NotesPanel.h"
#include "widgets/timeline/ReplayControlsPanel.h"

using namespace kvscope;

namespace {
long admitted(const TelemetryStore& store, const std::string& worker) {
  for (const WorkerSeries& w : store.workers())
    if (w.info.name == worker) return w.admitted;
  return -1;
}

bool starving(MainWindow& window, const QString& worker) {
  DecodeLoadModel& model = window.docks().decodeLoad().model();
  const int row = model.rowOfWorker(worker);
  return row >= 0 && model.starving(row);
}

bool hasFinding(const TelemetryStore& store, const std::string& mode) {
  for (const Finding& f : store.findings())
    if (f.mode == mode) return true;
  return false;
}

void typeKnob(MainWindow& window, const QString& knob, const QString& value) {
  auto* field = window.findChild<QLineEdit*>(QStringLiteral("knob:") + knob);
  QVERIFY(field);
  field->setFocus();
  field->selectAll();
  QTest::keyClick(field, Qt::Key_Backspace);
  QTest::keyClicks(field, value);
}
// The cold-D story on any source: D2 starves and B is diagnosed; paused (Space) while sessions
// still join, K=200 applied through the knobs panel shows as a marker; D2 then gets bindings.
// The window at 1600x1000 replaying `recording` at 1x its recorded time.
void openRecording(MainWindow& window, const QString& recording) { test::openRecording(window, recording, 1); }

void steerColdDecode(MainWindow& window) {
  const TelemetryStore& store = window.session().store();
  QTRY_VERIFY_WITH_TIMEOUT(store.now() >= secondsToTime(120), 120000);
  // Cold D: D2 gets nothing, the decode-load panel marks it and the diagnosis names mode B.
  QTRY_VERIFY_WITH_TIMEOUT(starving(window, "D2"), 10000);
  QCOMPARE(admitted(store, "D2"), 0L);
  QTRY_VERIFY_WITH_TIMEOUT(hasFinding(store, "B"), 120000);
  // Pause (Space) while sessions are still joining, so a slow machine cannot miss them.
  QVERIFY(store.now() < secondsToTime(300));
  window.togglePause();
  QTRY_VERIFY_WITH_TIMEOUT(window.statusText().contains("paused"), 30000);

  typeKnob(window, "K", "200");
  auto* apply = window.findChild<QPushButton*>(QStringLiteral("apply"));
  QVERIFY(apply && apply->isEnabled());
  apply->click();
  // Applied while paused; it comes back as a KnobChanged event (the store's value, a marker).
  QTRY_VERIFY_WITH_TIMEOUT(store.knobs().count("K") && store.knobs().at("K") == 200, 30000);
  window.togglePause();
  window.view().setRange(0, store.now() + secondsToTime(60));
  QTRY_VERIFY_WITH_TIMEOUT(!window.docks().kvPools().occupancyChart().markers().empty(), 10000);
  QVERIFY(window.docks().kvPools().occupancyChart().markers().front().label.startsWith("K=200"));
  const SimTime changed = window.docks().kvPools().occupancyChart().markers().front().time;
  // The cold worker starts receiving bindings.
  QTRY_VERIFY_WITH_TIMEOUT(admitted(store, "D2") >= 5, 120000);
  QVERIFY(store.now() > changed);
  window.view().setFollowLive(true);
  QTRY_VERIFY_WITH_TIMEOUT(!starving(window, "D2") || store.finished(), 120000);
  QVERIFY(!starving(window, "D2"));
}

}  // namespace

class ConsoleTest : public QObject {
  Q_OBJECT
 private slots:
  void init() { QCoreApplication::setOrganizationName("KVScopeTest"); }
  void embeddedColdDecodeRecoversWithLoadFloor();
  void connectedColdDecodeRecoversWithLoadFloor();
  void replayJumpsToTheCrashAndSelectsIt();
  void notesOnARecording();
  void screenshotModeWritesThePng();
  void framesDrainTheStagingBufferInBatches();
  void numberTablesRefreshFourTimesASecond();
  void aChartWithStaleColumnsIsRefreshedOnTheNextFrame();
  void exportsSummaryAsCsvAndMarkdown();
  void theWindowSaysWhatAnOperatorMissed();
  void recordsTheSessionFromNowOn();
};

void ConsoleTest::embeddedColdDecodeRecoversWithLoadFloor() {
  MainWindow window;
  window.resize(1600, 1000);
  window.show();
  // Paced (40x) so the test takes seconds, yet sessions are still joining (they join over the
  // first 300 s) when K changes: K steers where new sessions bind.
  window.openSource(std::make_unique<EmbeddedSimulationSource>("e2-cold-d", SimulationOptions{}, 40));
  steerColdDecode(window);
  // A simulation is one run: no marker, so the Runs list stays out of the way.
  QVERIFY(!window.runs().dock().isVisible());
  QCOMPARE(window.runs().model().rowCount(), 0);
}

void ConsoleTest::connectedColdDecodeRecoversWithLoadFloor() {
  QProcess server;
  server.start(KVSCOPE_CLI, {"serve", "--scenario", "e2-cold-d", "--speed", "40", "--listen", "127.0.0.1:0"});
  QVERIFY(server.waitForStarted());
  QByteArray line;
  const auto readFirstLine = [&] {
    line += server.readAllStandardOutput();
    return line.contains('\n');
  };
  QTRY_VERIFY_WITH_TIMEOUT(readFirstLine(), 60000);
  line = line.left(line.indexOf('\n'));  // spdlog's lines follow on the same stream
  QVERIFY2(line.startsWith("listening on "), line.constData());
  SourceSpec spec;
  spec.kind = SourceSpec::Remote;
  spec.target = line.mid(13).trimmed().toStdString();
  {
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    window.openSource(makeSource(spec));
    QTRY_VERIFY_WITH_TIMEOUT(window.statusText().contains("server"), 10000);
    steerColdDecode(window);
  }
  server.terminate();
  QVERIFY(server.waitForFinished(30000));
}

void ConsoleTest::replayJumpsToTheCrashAndSelectsIt() {
  QTemporaryDir dir;
  const QString recording = dir.filePath("crash.kvrec");
  const auto result =
      test::runCli({"simulate", "--scenario", "invariant-crash", "--duration", "1800", "--record", recording});
  QVERIFY2(result.code == 0, result.err.constData());

  MainWindow window;
  openRecording(window, recording);  // slow: the jump, not the playback, must bring the crash
  ReplayControlsPanel& replay = window.docks().replay();
  QVERIFY(replay.isVisible());
  replay.setKind(TimelineKind::Crash);
  QSignalSpy selected(&window.view(), &ViewState::eventSelected);
  QVERIFY(replay.jump(+1));
  QTRY_VERIFY_WITH_TIMEOUT(selected.count() >= 1, 60000);
  const auto seq = selected.last().at(0).value<std::uint64_t>();
  const TelemetryStore& store = window.session().store();
  const Event* crash = nullptr;
  for (const Event& e : store.discreteEvents())
    if (e.seq == seq) crash = &e;
  QVERIFY(crash);
  QVERIFY(std::holds_alternative<WorkerCrashed>(crash->payload));
  // The view shows it.
  QVERIFY(window.view().from() <= crash->time && crash->time <= window.view().to());
}

// A recording's notes (RUN.kvrec.notes.json) are listed, marked on the charts and jumped to; a note
// added in the console is kept beside the file.
void ConsoleTest::notesOnARecording() {
  QTemporaryDir dir;
  const QString recording = dir.filePath("run.kvrec");
  const auto result =
      test::runCli({"simulate", "--scenario", "e3-load-floor", "--duration", "600", "--record", recording});
  QVERIFY2(result.code == 0, result.err.constData());
  RunNotes given;
  QVERIFY(given.add({secondsToTime(120), "burst starts"}, nullptr));
  QVERIFY(given.add({secondsToTime(480), "D2 cold here"}, nullptr));
  QVERIFY(given.saveFor(recording.toStdString(), nullptr));

  MainWindow window;
  openRecording(window, recording);
  auto* notes = window.findChild<NotesPanel*>();
  QVERIFY(notes);
  QCOMPARE(notes->list().count(), 2);
  QVERIFY(notes->list().item(1)->text().contains("D2 cold here"));
  // A jump: the view centres on the note and the replay seeks there.
  QSignalSpy jumped(&window.view(), &ViewState::jumpRequested);
  emit notes->list().itemActivated(notes->list().item(1));
  QCOMPARE(jumped.count(), 1);
  QTRY_VERIFY_WITH_TIMEOUT(window.session().store().now() >= secondsToTime(479), 30000);
  QVERIFY(window.view().from() <= secondsToTime(480) && secondsToTime(480) <= window.view().to());
  // Every chart marks it.
  auto* pools = window.findChild<KvPoolPanel*>();
  QVERIFY(pools);
  QTRY_VERIFY_WITH_TIMEOUT(
      [&] {
        for (const auto& m : pools->chart(0).markers())
          if (m.label == "note: D2 cold here") return true;
        return false;
      }(),
      10000);
  // Added in the console: kept beside the recording, listed at once.
  auto* actions = window.findChild<NoteActions*>();
  QVERIFY(actions);
  QString error;
  QVERIFY2(actions->addNote(secondsToTime(300), "look here", &error), qPrintable(error));
  QCOMPARE(notes->list().count(), 3);
  QCOMPARE(RunNotes::loadFor(recording.toStdString()).notes().at(1).text, std::string("look here"));
  QVERIFY(!actions->addNote(secondsToTime(310), "  ", &error));
  QVERIFY2(error.contains("needs a text"), qPrintable(error));
  // A finding kept as a note (the findings table's context menu): at its window's start, named.
  auto* diagnosis = window.findChild<DiagnosisPanel*>();
  QVERIFY(diagnosis);
  QTRY_VERIFY_WITH_TIMEOUT(!window.session().store().findings().empty(), 30000);
  const Finding finding = window.session().store().findings().front();
  emit diagnosis->noteRequested(DiagnosisPanel::noteOf(finding));
  QCOMPARE(notes->list().count(), 4);
  bool kept = false;
  const RunNotes saved = RunNotes::loadFor(recording.toStdString());
  for (const RunNote& n : saved.notes())
    kept = kept || (std::abs(n.time - secondsToTime(finding.window_start_s)) <= 1 &&
                    n.text == DiagnosisPanel::noteOf(finding).text);
  QVERIFY(kept);
}

void ConsoleTest::screenshotModeWritesThePng() {
  QTemporaryDir dir;
  const QString png = dir.filePath("shot.png");
  QProcess gui;
  gui.setProcessEnvironment([] {
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    return env;
  }());
  gui.start(KVSCOPE_GUI, {"--scenario", "e2-cold-d", "--screenshot", png, "--run-for", "300", "--size", "1600x1000"});
  QVERIFY(gui.waitForFinished(120000));
  QCOMPARE(gui.exitCode(), 0);
  QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  // Bad input is a usage error with a message, not a crash.
  gui.start(KVSCOPE_GUI, {"--screenshot", png});
  QVERIFY(gui.waitForFinished(30000));
  QCOMPARE(gui.exitCode(), 2);
  QVERIFY(gui.readAllStandardError().contains("--run-for"));
  // --help needs no display at all.
  QProcess help;
  QProcessEnvironment bare = QProcessEnvironment::systemEnvironment();
  bare.remove("QT_QPA_PLATFORM");
  bare.remove("DISPLAY");
  bare.remove("WAYLAND_DISPLAY");
  help.setProcessEnvironment(bare);
  help.start(KVSCOPE_GUI, {"--help"});
  QVERIFY(help.waitForFinished(30000));
  QCOMPARE(help.exitCode(), 0);
  QVERIFY(help.readAllStandardOutput().contains("--screenshot"));
  // Nor does --version, which names the git revision (or "unknown" outside a git checkout).
  help.start(KVSCOPE_GUI, {"--version"});
  QVERIFY(help.waitForFinished(30000));
  QCOMPARE(help.exitCode(), 0);
  const QString version = QString::fromUtf8(help.readAllStandardOutput());
  QVERIFY2(QRegularExpression(R"(^kvscope \d+\.\d+\.\d+ \(git ([0-9a-f]{12}(-dirty)?|unknown)\)\n$)")
               .match(version)
               .hasMatch(),
           qPrintable(version));
}

namespace {
// A source the test fills by hand: the staging buffer is what a producer thread would fill.
struct HandFedSource : Source {
  std::string description() const override { return "hand-fed"; }
  SourceCapabilities capabilities() const override { return {}; }
  void start() override {}
  void stop() override {}
  SourceStatus status() const override { return {SourceState::Running, {}, 0, 0, 0, {}}; }
};
}  // namespace

void ConsoleTest::framesDrainTheStagingBufferInBatches() {
  test::EventLog log;
  SimulationOptions options;
  options.duration_s = 600;
  test::simulate("e3-load-floor", {}, options, &log);
  QVERIFY(log.events.size() > 1000);
  RunSession session;
  session.setFrameInterval(1000000);  // frames only when the test asks
  auto source = std::make_unique<HandFedSource>();
  HandFedSource* fed = source.get();
  session.open(std::move(source));
  QSignalSpy frames(&session, &RunSession::frame);
  for (const Event& e : log.events) fed->staging().onEvent(e);  // what the sim thread does
  session.drainNow();
  // One frame takes everything staged since the last one: no signal per event.
  QCOMPARE(frames.count(), 1);
  QCOMPARE(session.lastBatchSize(), static_cast<int>(log.events.size()));
  QCOMPARE(session.store().eventCount(), static_cast<std::uint64_t>(log.events.size()));
  session.drainNow();
  QCOMPARE(session.lastBatchSize(), 0);
}

// The worker table is rate limited (TelemetryPanel::refreshIntervalMs): a frame within 250 ms of
// its last refresh leaves it as it was; a later frame, a new run and a forced refresh do not.
void ConsoleTest::numberTablesRefreshFourTimesASecond() {
  test::EventLog log;
  SimulationOptions options;
  options.duration_s = 600;
  test::simulate("e3-load-floor", {}, options, &log);
  // Thirds: the run's end (which refreshes at once) only in the last.
  const auto third = log.events.begin() + static_cast<std::ptrdiff_t>(log.events.size() / 3);
  const auto two_thirds = log.events.begin() + static_cast<std::ptrdiff_t>(2 * log.events.size() / 3);
  MainWindow window;
  window.resize(1600, 1000);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  DecodeLoadModel& model = window.docks().decodeLoad().model();
  auto bindings = [&] {
    long n = 0;
    for (int row = 0; row < model.rowCount(); ++row)
      n += model.index(row, DecodeLoadModel::Bindings).data().toLongLong();
    return n;
  };
  TelemetryStore store;
  store.ingest(std::vector<Event>(log.events.begin(), third));
  window.docks().refresh(store, false);
  const long first = bindings();
  QVERIFY(first > 0);
  QElapsedTimer clock;
  clock.start();
  store.ingest(std::vector<Event>(third, two_thirds));
  window.docks().refresh(store, false);
  if (clock.elapsed() < 200) QCOMPARE(bindings(), first);  // (a machine stalled past the interval proves nothing)
  QTest::qWait(300);
  window.docks().refresh(store, false);
  const long second = bindings();
  QVERIFY(second > first);
  // A new run shows at once, as do the run's end and a forced refresh.
  store.clear();
  store.ingest(std::vector<Event>(log.events.begin(), third));
  window.docks().refresh(store, false);
  QCOMPARE(bindings(), first);
  store.ingest(std::vector<Event>(third, two_thirds));
  window.docks().refresh(store, true);
  QCOMPARE(bindings(), second);
  store.ingest(std::vector<Event>(two_thirds, log.events.end()));
  QVERIFY(store.finished());
  window.docks().refresh(store, false);
  QVERIFY(bindings() > second);
}

// A chart whose y labels moved its plot edge asks for its data again (TimeSeriesChart::columnsStale):
// the next frame refreshes its panel even though the store, the view and the size are unchanged.
void ConsoleTest::aChartWithStaleColumnsIsRefreshedOnTheNextFrame() {
  test::EventLog log;
  SimulationOptions options;
  options.duration_s = 300;
  test::simulate("e3-load-floor", {}, options, &log);
  MainWindow window;
  window.resize(1600, 1000);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  TelemetryStore store;
  store.ingest(log.events);
  window.view().setRange(0, store.now());
  window.docks().refresh(store, false);
  TimeSeriesChart& chart = window.docks().kvPools().occupancyChart();
  QVERIFY(chart.seriesCount() > 0 && !chart.drawnColumns(0).empty());
  // Nothing moved: a frame leaves the chart alone (the columns cleared here stay cleared).
  chart.clearSeriesData(0);
  window.docks().refresh(store, false);
  QVERIFY(chart.drawnColumns(0).empty());
  // The chart reports its columns stale: the next frame refreshes its panel, once.
  emit chart.columnsStale();
  window.docks().refresh(store, false);
  QVERIFY(!chart.drawnColumns(0).empty());
  chart.clearSeriesData(0);
  window.docks().refresh(store, false);
  QVERIFY(chart.drawnColumns(0).empty());
}

void ConsoleTest::exportsSummaryAsCsvAndMarkdown() {
  MainWindow window;
  window.openSource(std::make_unique<EmbeddedSimulationSource>(
      "e2-cold-d",
      [] {
        SimulationOptions o;
        o.duration_s = 600;
        return o;
      }(),
      0));
  QTRY_VERIFY_WITH_TIMEOUT(window.session().store().finished(), 60000);
  QTemporaryDir dir;
  ExportActions exporter(window, window.session());
  QString error;
  QVERIFY2(exporter.saveSummary(dir.filePath("s.csv"), &error), qPrintable(error));
  QVERIFY2(exporter.saveSummary(dir.filePath("s.md"), &error), qPrintable(error));
  QVERIFY2(exporter.saveWindowPng(dir.filePath("w.png"), &error), qPrintable(error));
  QFile csv(dir.filePath("s.csv")), md(dir.filePath("s.md"));
  QVERIFY(csv.open(QIODevice::ReadOnly) && md.open(QIODevice::ReadOnly));
  const QString c = csv.readAll(), m = md.readAll();
  QVERIFY(c.startsWith("worker,role,bindings"));
  QVERIFY(c.contains("\nD2,decode,0,"));  // the cold worker, as the panel shows it
  QVERIFY(m.contains("| D2 | decode | 0 |"));
  QVERIFY(m.contains("[B] Cold-D"));
  QVERIFY(!QImage(dir.filePath("w.png")).isNull());
  // A path that cannot be written is an error with the reason, and leaves nothing behind.
  QVERIFY(!exporter.saveSummary(dir.filePath("missing/dir/s.csv"), &error));
  QVERIFY(error.contains("missing/dir"));
}

// What the window tells an operator who looked away or zoomed back: a finding that appeared while
// another window was active is counted in the title until this one is active again, and pausing
// is offered with it; a view that
// stopped following says so, and its bar takes it back to now; "?" lists every shortcut.
void ConsoleTest::theWindowSaysWhatAnOperatorMissed() {
  MainWindow window;
  window.resize(1280, 800);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  QWidget elsewhere;
  elsewhere.show();
  elsewhere.activateWindow();
  QTRY_VERIFY(!window.isActiveWindow());
  window.openSource(std::make_unique<EmbeddedSimulationSource>("e2-cold-d", SimulationOptions{}, 40));
  const TelemetryStore& store = window.session().store();
  QTRY_VERIFY_WITH_TIMEOUT(!store.findings().empty(), 120000);
  QTRY_VERIFY_WITH_TIMEOUT(window.findingAlert().unseen() >= 1, 10000);
  QVERIFY2(window.windowTitle().startsWith(QStringLiteral("(%1) KVScope").arg(window.findingAlert().unseen())),
           qPrintable(window.windowTitle()));
  QVERIFY2(window.findingAlert().lastMessage().contains(QStringLiteral(" s")),
           qPrintable(window.findingAlert().lastMessage()));
  window.activateWindow();
  QTRY_COMPARE(window.windowTitle(), QStringLiteral("KVScope"));
  // The finding came while the run went on: pausing is offered, and done by the offer.
  QTRY_VERIFY_WITH_TIMEOUT(window.pauseOffer().isVisible(), 10000);
  QVERIFY2(window.pauseOffer().text().startsWith(QStringLiteral("New finding")),
           qPrintable(window.pauseOffer().text()));
  QTest::mouseClick(const_cast<QPushButton*>(&window.pauseOffer()), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(window.statusText().contains("paused"), 30000);
  QVERIFY(!window.pauseOffer().isVisible());

  QVERIFY(!window.notLiveBar().isVisible());
  window.view().setRange(0, secondsToTime(30));  // a zoom into the past stops following
  QVERIFY(!window.view().followLive());
  QVERIFY(window.notLiveBar().isVisible());
  QTest::mouseClick(const_cast<QPushButton*>(&window.notLiveBar()), Qt::LeftButton);
  QVERIFY(window.view().followLive());
  QVERIFY(!window.notLiveBar().isVisible());

  const auto rows = ShortcutsDialog::rows(*window.menuBar());
  auto keysOf = [&rows](const QString& what) {
    for (const auto& [name, keys] : rows)
      if (name == what) return keys;
    return QString();
  };
  QCOMPARE(keysOf(QStringLiteral("Run > Pause / resume")),
           QKeySequence(Qt::Key_Space).toString(QKeySequence::NativeText));
  QVERIFY2(keysOf(QStringLiteral("Help > Keyboard shortcuts")).startsWith(QStringLiteral("?")),
           qPrintable(keysOf(QStringLiteral("Help > Keyboard shortcuts"))));
  QVERIFY(!keysOf(QStringLiteral("View > Zoom in")).isEmpty());
}

// File > Record this session, begun mid-run: the file opens as a recording whose run is the one
// on screen, with the frames the console received while it recorded, and replays in the console.
void ConsoleTest::recordsTheSessionFromNowOn() {
  QTemporaryDir dir;
  const QString path = dir.filePath("session.kvrec");
  MainWindow window;
  window.resize(1280, 800);
  window.show();
  SessionRecorder& recorder = window.sessionRecorder();
  QString error;
  QVERIFY(!recorder.start(path, &error));  // no run yet
  QVERIFY2(error.contains("no run"), qPrintable(error));
  window.openSource(std::make_unique<EmbeddedSimulationSource>("e2-cold-d", SimulationOptions{}, 40));
  const TelemetryStore& store = window.session().store();
  QTRY_VERIFY_WITH_TIMEOUT(store.now() >= secondsToTime(30), 60000);
  QVERIFY2(recorder.start(path, &error), qPrintable(error));
  QVERIFY(window.statusText().contains("recording to"));
  const SimTime from = store.now();
  QTRY_VERIFY_WITH_TIMEOUT(store.now() >= from + secondsToTime(60), 60000);
  QVERIFY2(recorder.stop(&error), qPrintable(error));
  std::string why;
  const auto reader = KvrecReader::open(QFile::encodeName(path).toStdString(), &why);
  QVERIFY2(reader, why.c_str());
  QVERIFY(reader->problems().empty());
  QVERIFY2(reader->stats().frames > 60, qPrintable(QString::number(reader->stats().frames)));
  QVERIFY(reader->firstTime() >= from);
  QVERIFY(reader->lastTime() >= from + secondsToTime(60));
  // It replays in the console: the run on screen is e2-cold-d again.
  SourceSpec spec;
  spec.kind = SourceSpec::Recording;
  spec.target = QFile::encodeName(path).toStdString();
  window.openSource(makeSource(spec));
  QTRY_VERIFY_WITH_TIMEOUT(store.run() && store.run()->scenario == "e2-cold-d", 30000);
}

QTEST_MAIN(ConsoleTest)
#include "test_console.moc"
