// The diagnosis panel (panel 7) over real simulator runs: each scenario's failure mode is
// listed, clicking one selects its window everywhere, an empty run says so, and the engine is
// asked at most once a second however fast the frames come.
#include <QtTest>

#include <QApplication>

#include <QAbstractItemModelTester>
#include <QPushButton>
#include <QTableView>

#include <map>
#include <memory>

#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"
#include "widgets/common/ViewState.h"
#include "widgets/diagnosis/DiagnosisPanel.h"
#include "widgets/diagnosis/FindingsModel.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {

const std::vector<Event>& eventsOf(const QString& scenario) {
  static std::map<QString, std::vector<Event>> cache;
  auto& events = cache[scenario];
  if (events.empty()) {
    EventLog log;
    simulate(scenario.toStdString(), {}, {}, &log);
    events = std::move(log.events);
  }
  return events;
}

// An evict storm over D0 .. D<workers - 1>.
Finding evictStorm(int workers, double from_s, double to_s) {
  Finding c;
  c.mode = "C";
  c.name = "Evict storm (session-level eviction)";
  c.window_start_s = from_s;
  c.window_end_s = to_s;
  for (int d = 0; d < workers; ++d) c.subjects.push_back("D" + std::to_string(d));
  return c;
}

const TelemetryStore& storeFor(const QString& scenario) {
  static std::map<QString, std::unique_ptr<TelemetryStore>> cache;
  auto& slot = cache[scenario];
  if (!slot) {
    slot = std::make_unique<TelemetryStore>();
    slot->ingest(eventsOf(scenario));
  }
  return *slot;
}

int rowOfMode(const FindingsModel& model, const QString& mode);
bool showPanel(QWidget& panel);

// The panel shown over e2-cold-d, and the row of its cold-D finding (B).
struct ColdDPanel {
  ViewState view;
  DiagnosisPanel panel{view};
  int row = -1;
  bool ready() {
    if (!showPanel(panel)) return false;
    panel.refresh(storeFor(QStringLiteral("e2-cold-d")));
    row = rowOfMode(*panel.model(), QStringLiteral("B"));
    return row >= 0;
  }
};

int rowOfMode(const FindingsModel& model, const QString& mode) {
  for (int row = 0; row < model.rowCount(); ++row)
    if (model.index(row, FindingsModel::Mode).data(FindingsModel::ModeRole).toString() == mode) return row;
  return -1;
}

bool showPanel(QWidget& panel) {
  panel.resize(1200, 400);
  panel.show();
  return QTest::qWaitForWindowExposed(&panel);
}

}  // namespace

class TestDiagnosisPanel : public QObject {
  Q_OBJECT
 private slots:
  void findingsModelKeepsItsContract() {
    FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);

    std::vector<Finding> findings = storeFor("e2-cold-d").findings();
    QVERIFY(!findings.empty());
    model.setFindings(findings);
    QCOMPARE(model.rowCount(), static_cast<int>(findings.size()));
    QCOMPARE(inserts.count(), 1);
    const int b = rowOfMode(model, QStringLiteral("B"));
    QVERIFY(b >= 0);
    const Finding& f = findings[static_cast<std::size_t>(b)];
    QCOMPARE(model.index(b, FindingsModel::Name).data().toString(), QString::fromStdString(f.name));
    QCOMPARE(model.index(b, FindingsModel::Evidence).data().toString(), QString::fromStdString(f.evidence));
    QCOMPARE(model.index(b, FindingsModel::Suggestion).data().toString(), QString::fromStdString(f.suggestion));
    QCOMPARE(model.index(b, 0).data(FindingsModel::WindowStartRole).toDouble(), f.window_start_s);
    QCOMPARE(model.index(b, 0).data(FindingsModel::WindowEndRole).toDouble(), f.window_end_s);
    QVERIFY(
        model.index(b, FindingsModel::Window).data().toString().contains(QString::number(f.window_start_s, 'f', 1)));
    QCOMPARE(model.headerData(FindingsModel::Evidence, Qt::Horizontal).toString(), QStringLiteral("Evidence"));

    // The same findings with grown numbers update in place; a new one is appended; neither resets
    // (a reset would drop the user's selection once a second).
    findings[0].window_end_s += 60;
    findings[0].evidence += " (later)";
    model.setFindings(findings);
    QCOMPARE(changes.count(), 1);
    const auto more = storeFor("cascade").findings();
    QVERIFY(!more.empty());
    findings.push_back(more.front());
    model.setFindings(findings);
    QCOMPARE(inserts.count(), 2);
    QCOMPARE(resets.count(), 0);
    model.setFindings(findings);  // unchanged: no signal at all
    QCOMPARE(changes.count(), 1);

    model.setFindings(more);  // a different run's findings
    QCOMPARE(resets.count(), 1);
    model.setFindings({});
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(resets.count(), 2);
  }

  void listsTheModeOfEachScenario_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("mode");
    QTest::newRow("e2-cold-d: B") << "e2-cold-d"
                                  << "B";
    QTest::newRow("cascade: A") << "cascade"
                                << "A";
    QTest::newRow("evict-storm: C") << "evict-storm"
                                    << "C";
    QTest::newRow("reseed-storm: C'") << "reseed-storm"
                                      << "C'";
    QTest::newRow("invariant-crash: D") << "invariant-crash"
                                        << "D";
  }
  void listsTheModeOfEachScenario() {
    QFETCH(QString, scenario);
    QFETCH(QString, mode);
    ViewState view;
    DiagnosisPanel panel(view);
    QVERIFY(showPanel(panel));
    panel.refresh(storeFor(scenario));
    QVERIFY(!panel.showsEmptyState());
    QVERIFY(panel.table()->isVisible());
    QVERIFY2(rowOfMode(*panel.model(), mode) >= 0, qPrintable(scenario));
  }

  void clickingAFindingSelectsItsWindow() {
    ColdDPanel shown;
    QVERIFY(shown.ready());
    DiagnosisPanel& panel = shown.panel;
    ViewState& view = shown.view;
    const int row = shown.row;
    const Finding finding = *panel.model()->finding(row);

    QSignalSpy windows(&view, &ViewState::windowSelected);
    QTableView* table = panel.table();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualRect(panel.model()->index(row, FindingsModel::Name)).center());
    QCOMPARE(windows.count(), 1);
    QCOMPARE(windows.at(0).at(0).value<SimTime>(), secondsToTime(finding.window_start_s));
    QCOMPARE(windows.at(0).at(1).value<SimTime>(), secondsToTime(finding.window_end_s));
    // Every chart shares the range: it now spans the window.
    QVERIFY(!view.followLive());
    QVERIFY(view.from() <= secondsToTime(finding.window_start_s));
    QVERIFY(view.to() >= secondsToTime(finding.window_end_s));
    QVERIFY(panel.detailsText().contains(QString::fromStdString(finding.evidence).toHtmlEscaped()));
    QVERIFY(panel.detailsText().contains(QString::fromStdString(finding.suggestion).toHtmlEscaped()));

    // Clicking the current finding again (after panning away) shows its window again.
    view.setRange(0, secondsToTime(10));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualRect(panel.model()->index(row, FindingsModel::Mode)).center());
    QCOMPARE(windows.count(), 2);
  }

  // A selected finding fades the other workers everywhere; deselected (Esc in the list, or
  // Ctrl+click on it), every worker is drawn in full again.
  void deselectingAFindingGivesTheChartsBackTheirColours() {
    ColdDPanel shown;
    QVERIFY(shown.ready());
    DiagnosisPanel& panel = shown.panel;
    ViewState& view = shown.view;
    connect(&panel, &DiagnosisPanel::subjectsSelected, &view, &ViewState::highlightWorkers);
    QTableView* table = panel.table();
    const QPoint cell = table->visualRect(panel.model()->index(shown.row, FindingsModel::Name)).center();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell);
    QVERIFY(!view.highlightedWorkers().isEmpty());
    QTest::keyClick(table, Qt::Key_Escape);
    QVERIFY(view.highlightedWorkers().isEmpty());
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell);
    QVERIFY(!view.highlightedWorkers().isEmpty());
    QTest::mouseClick(table->viewport(), Qt::LeftButton, Qt::ControlModifier, cell);
    QVERIFY(view.highlightedWorkers().isEmpty());
  }

  // A finding whose workers grow (C - D0, then C - D0, D1, D2) keeps its row, and its mode and
  // window are re-measured at once: never elided to "C - ...".
  void modeAndWindowFitAsTheFindingsGrow() {
    ViewState view;
    DiagnosisPanel panel(view);
    panel.resize(420, 150);  // a short list: the second finding is below the fold
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    Finding b;
    b.mode = "B";
    b.name = "Cold-D / overlap pinning";
    b.window_start_s = 0.8;
    b.window_end_s = 900;
    b.subjects = {"D2"};
    Finding c;
    c.mode = "C";
    c.name = "Evict storm (session-level eviction)";
    c.window_start_s = 249.5;
    c.window_end_s = 300;
    c.subjects = {"D0"};
    panel.model()->setFindings({b, c});
    c.subjects = {"D0", "D1", "D2"};
    c.window_end_s = 845.9;
    panel.model()->setFindings({b, c});
    // Measured at once: a shot (or a look) taken before the next layout pass must not elide them.
    for (const int column : {int(FindingsModel::Mode), int(FindingsModel::Window)}) {
      const QString text = panel.model()->index(1, column).data().toString();
      QVERIFY2(panel.table()->fontMetrics().horizontalAdvance(text) < panel.table()->columnWidth(column),
               qPrintable(QStringLiteral("'%1' in %2 px").arg(text).arg(panel.table()->columnWidth(column))));
    }
  }

  // A finding over most of a 64-D cluster names three workers in its cell and all of them in its
  // tooltip (a finding's own order: the engine lists the worst first).
  void manySubjectsNameThreeAndTheTooltipAll() {
    Finding c = evictStorm(52, 249.5, 848.5);
    FindingsModel model;
    model.setFindings({c});
    QCOMPARE(model.index(0, FindingsModel::Mode).data().toString(), QStringLiteral("C - D0, D1, D2 and 49 more"));
    const QString tip = model.index(0, FindingsModel::Mode).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains("Mode C: Evict storm") && tip.contains("D3, ") && tip.contains("D51"), qPrintable(tip));
    c.subjects.resize(3);
    model.setFindings({c});
    QCOMPARE(model.index(0, FindingsModel::Mode).data().toString(), QStringLiteral("C - D0, D1, D2"));
    QCOMPARE(model.index(0, FindingsModel::Mode).data(Qt::ToolTipRole).toString(),
             QStringLiteral("Mode C: Evict storm (session-level eviction)"));
  }

  // The side column at 1280x800 with 64 D (a finding over 58 of them, an hour-long window): the
  // mode cell names one worker so that the failure mode keeps its longest word; a wider dock names
  // three again.
  void aNarrowDockNamesFewerWorkers() {
    ViewState view;
    DiagnosisPanel panel(view);
    panel.resize(345, 220);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const Finding c = evictStorm(58, 466.4, 1933.6);
    panel.model()->setFindings({c});
    QApplication::processEvents();
    const QFontMetrics fm = panel.table()->fontMetrics();
    QCOMPARE(panel.model()->index(0, FindingsModel::Mode).data().toString(), QStringLiteral("C - D0 and 57 more"));
    QVERIFY2(panel.table()->columnWidth(FindingsModel::Name) > fm.horizontalAdvance(QStringLiteral("(session-level")),
             qPrintable(QString::number(panel.table()->columnWidth(FindingsModel::Name))));
    panel.resize(700, 220);
    QApplication::processEvents();
    QCOMPARE(panel.model()->index(0, FindingsModel::Mode).data().toString(),
             QStringLiteral("C - D0, D1, D2 and 55 more"));
    // A wide panel given the finding while its table page was still hidden (no finding yet).
    DiagnosisPanel wide(view);
    wide.resize(700, 220);
    wide.show();
    QVERIFY(QTest::qWaitForWindowExposed(&wide));
    wide.model()->setFindings({c});
    QApplication::processEvents();
    QCOMPARE(wide.model()->index(0, FindingsModel::Mode).data().toString(),
             QStringLiteral("C - D0, D1, D2 and 55 more"));
  }

  // A narrow, short dock (the side column at 1280x800-1600x1000): every finding is in view, a long
  // failure mode wraps onto a second line instead of being cut, and the evidence keeps some room.
  void everyFindingInViewInANarrowDock() {
    ViewState view;
    DiagnosisPanel panel(view);
    panel.resize(345, 230);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    std::vector<Finding> findings(3);
    const char* names[] = {"Cold-D / overlap pinning", "Evict storm (session-level eviction)",
                           "Reseed storm (seed budget)"};
    for (int i = 0; i < 3; ++i) {
      findings[i].mode = std::string(1, char('B' + i));
      findings[i].name = names[i];
      findings[i].window_start_s = 249.5;
      findings[i].window_end_s = 848.5;
      findings[i].subjects = {"D0", "D1"};
    }
    panel.model()->setFindings(findings);
    QTableView* table = panel.table();
    QTRY_VERIFY(table->rowHeight(1) > 0);
    const QString evict = panel.model()->index(1, FindingsModel::Name).data().toString();
    QVERIFY(table->fontMetrics().horizontalAdvance(evict) >
            table->columnWidth(FindingsModel::Name));  // too wide for a line
    QVERIFY2(table->rowHeight(1) >= 2 * table->fontMetrics().lineSpacing(), "the long name is not wrapped");
    for (int row = 0; row < 3; ++row) {
      const int bottom = table->rowViewportPosition(row) + table->rowHeight(row);
      QVERIFY2(bottom <= table->viewport()->height(),
               qPrintable(
                   QStringLiteral("row %1 ends at %2 of %3 px").arg(row).arg(bottom).arg(table->viewport()->height())));
    }
    QVERIFY(table->height() < panel.height() - 60);  // the evidence below is not squeezed out
  }

  void emptyRunSaysNothingWasFound() {
    TelemetryStore store;
    RunStarted run;
    run.workers = {{"D0", WorkerRole::Decode, 1000}, {"D1", WorkerRole::Decode, 1000}};
    store.ingest(Event{1, 0, run});
    ViewState view;
    DiagnosisPanel panel(view);
    QVERIFY(showPanel(panel));
    QVERIFY(panel.showsEmptyState());  // before the first frame as well
    panel.refresh(store);
    QVERIFY(panel.showsEmptyState());
    QVERIFY(panel.emptyStateText().contains(QStringLiteral("No failure mode detected so far")));
    QVERIFY(!panel.table()->isVisible());

    panel.refresh(storeFor("e2-cold-d"));  // findings arrive (within the throttle's second)
    QTRY_VERIFY_WITH_TIMEOUT(!panel.showsEmptyState(), 3000);
    QVERIFY(panel.table()->isVisible());
  }

  // On a run that takes no knob changes (a live cluster without our router, a recording) the fix
  // buttons are off and say why; clicking them sends nothing. A resolved finding's fix is off too.
  void fixButtonsFollowWhetherTheRunTakesKnobs() {
    ColdDPanel shown;
    QVERIFY(shown.ready());
    DiagnosisPanel& panel = shown.panel;
    const int row = shown.row;
    panel.table()->setCurrentIndex(panel.model()->index(row, FindingsModel::Name));
    auto* preview = panel.findChild<QPushButton*>(QStringLiteral("previewFix"));
    auto* apply = panel.findChild<QPushButton*>(QStringLiteral("applyFix"));
    QVERIFY(preview && apply);
    QSignalSpy previews(&panel, &DiagnosisPanel::fixPreviewRequested);
    QSignalSpy applies(&panel, &DiagnosisPanel::fixApplyRequested);

    const QString why = QStringLiteral("live cluster takes no knob or policy changes");
    panel.setFixesAllowed(false, why);
    QVERIFY(!preview->isEnabled() && !apply->isEnabled());
    QCOMPARE(apply->toolTip(), why);
    QTest::mouseClick(apply, Qt::LeftButton);
    panel.applySelectedFix();
    panel.previewSelectedFix();
    QCOMPARE(previews.count() + applies.count(), 0);

    panel.setFixesAllowed(true, {});
    QVERIFY(preview->isEnabled() && apply->isEnabled());
    // At the run's end no session has started for minutes: the real fix, the policy, is offered.
    QVERIFY2(apply->toolTip().contains(QStringLiteral("exclusive-overlap")), qPrintable(apply->toolTip()));
    QSignalSpy policy_applies(&panel, &DiagnosisPanel::policyFixApplyRequested);
    QTest::mouseClick(apply, Qt::LeftButton);
    QCOMPARE(policy_applies.count(), 1);
    QCOMPARE(applies.count(), 0);

    Finding resolved = *panel.model()->finding(row);
    resolved.resolved = true;
    panel.model()->setFindings({resolved});
    panel.table()->setCurrentIndex(panel.model()->index(0, FindingsModel::Name));
    QVERIFY(!apply->isEnabled());
    QVERIFY(apply->toolTip().contains(QStringLiteral("no longer holds")));
    QVERIFY(panel.model()->index(0, FindingsModel::Window).data().toString().endsWith(QStringLiteral("resolved")));
  }

  // K moves only sessions that start after it: once none has started for kNewSessionsWindowS, the
  // cold-D finding's buttons offer its real fix, the exclusive-overlap policy, and say why.
  void aKnobFixThatCanNoLongerActOffersThePolicy() {
    // The run up to 250 s: finding B holds, and sessions still start.
    const auto& all = eventsOf("e2-cold-d");
    std::vector<Event> events;
    for (const Event& e : all)
      if (e.time <= secondsToTime(250)) events.push_back(e);
    TelemetryStore store;
    store.ingest(events);
    ViewState view;
    DiagnosisPanel panel(view);
    QVERIFY(showPanel(panel));
    panel.setFixesAllowed(true, {});
    panel.refreshNow(store);
    int row = rowOfMode(*panel.model(), QStringLiteral("B"));
    QVERIFY(row >= 0);
    panel.table()->setCurrentIndex(panel.model()->index(row, FindingsModel::Name));
    auto* preview = panel.findChild<QPushButton*>(QStringLiteral("previewFix"));
    QVERIFY(preview);
    QCOMPARE(preview->text(), QStringLiteral("Preview fix"));  // sessions still start: K can act
    QVERIFY(preview->toolTip().contains(QStringLiteral("K=200")));

    // The run goes on with its sessions, and none new: snapshots only, past the window.
    const std::optional<SimTime> last = store.lastNewSession();
    QVERIFY(last);
    Event later;
    for (const Event& e : events)  // the last snapshot: every worker as the run left it
      if (std::holds_alternative<Snapshot>(e.payload)) later = e;
    QVERIFY(std::holds_alternative<Snapshot>(later.payload));
    for (int step = 1; step <= 8; ++step) {
      later.seq = events.back().seq + static_cast<std::uint64_t>(step);
      later.time = store.now() + secondsToTime(kNewSessionsWindowS / 6);
      store.ingest(later);
    }
    panel.refreshNow(store);
    row = rowOfMode(*panel.model(), QStringLiteral("B"));
    QVERIFY(row >= 0);
    QVERIFY(!panel.model()->finding(row)->resolved);
    panel.table()->setCurrentIndex(panel.model()->index(row, FindingsModel::Name));
    QCOMPARE(preview->text(), QStringLiteral("Preview policy fix"));
    QVERIFY2(
        preview->toolTip().contains(QStringLiteral("none has started since %1 s").arg(timeToSeconds(*last), 0, 'f', 1)),
        qPrintable(preview->toolTip()));
    QVERIFY(panel.detailsText().contains(QStringLiteral("exclusive-overlap")));
    QSignalSpy knob_previews(&panel, &DiagnosisPanel::fixPreviewRequested);
    QSignalSpy policy_previews(&panel, &DiagnosisPanel::policyFixPreviewRequested);
    QTest::mouseClick(preview, Qt::LeftButton);
    QCOMPARE(knob_previews.count(), 0);
    QCOMPARE(policy_previews.count(), 1);
    QCOMPARE(policy_previews.first().first().value<std::string>(), std::string("exclusive-overlap"));
  }

  void asksTheEngineAtMostOncePerInterval() {
    const auto& events = eventsOf("e2-cold-d");
    QVERIFY(events.size() > 1000);
    TelemetryStore store;
    const std::size_t burst = 20, step = 10;
    const std::size_t head = events.size() - burst * step;
    store.ingest(std::vector<Event>(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(head)));

    ViewState view;
    DiagnosisPanel panel(view);
    QElapsedTimer clock;
    clock.start();
    panel.refresh(store);
    QCOMPARE(panel.recomputations(), 1);
    // Frames at 30 fps with the store moving each time: the findings wait for the interval.
    for (std::size_t i = 0; i < burst; ++i) {
      const auto from = events.begin() + static_cast<std::ptrdiff_t>(head + i * step);
      store.ingest(std::vector<Event>(from, from + static_cast<std::ptrdiff_t>(step)));
      panel.refresh(store);
    }
    QVERIFY2(clock.elapsed() < DiagnosisPanel::kRecomputeIntervalMs, "the burst itself took longer than the interval");
    QCOMPARE(panel.recomputations(), 1);
    // ... and the last change lands even though no frame follows it (a finished run).
    QTRY_COMPARE_WITH_TIMEOUT(panel.recomputations(), 2, 3000);
    QVERIFY(clock.elapsed() >= DiagnosisPanel::kRecomputeIntervalMs);
    QCOMPARE(panel.model()->rowCount(), static_cast<int>(store.findings().size()));
    QVERIFY(rowOfMode(*panel.model(), QStringLiteral("B")) >= 0);
    // A frame with nothing new asks nothing.
    QTest::qWait(DiagnosisPanel::kRecomputeIntervalMs + 100);
    panel.refresh(store);
    QCOMPARE(panel.recomputations(), 2);
  }
};

QTEST_MAIN(TestDiagnosisPanel)
#include "test_diagnosis_panel.moc"
