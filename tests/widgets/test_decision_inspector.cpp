// The decision inspector: the request table mirrors the store's bounded ring with row inserts and
// removes (no reset per frame), and a selected request shows its route decision: every candidate,
// the chosen one marked, each policy's score components as columns. Fed with real simulator runs.
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QFont>
#include <QLabel>
#include <QTableView>

#include <map>

#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"
#include "widgets/common/ViewState.h"
#include "widgets/decisions/DecisionInspectorPanel.h"
#include "widgets/decisions/DecisionModel.h"
#include "widgets/decisions/RequestSpanView.h"
#include "widgets/decisions/RequestTableModel.h"

using namespace kvscope;

namespace {

// Ten simulated minutes: sessions keep joining for five, so every worker has been chosen.
constexpr double kRunSeconds = 600;

// The simulator is deterministic: one run per (scenario, policy) serves the whole suite.
const std::vector<Event>& runEvents(const std::string& scenario, const std::string& policy = {}) {
  static std::map<std::pair<std::string, std::string>, std::vector<Event>> runs;
  auto& events = runs[{scenario, policy}];
  if (events.empty()) {
    test::EventLog log;
    SimulationOptions options;
    options.policy = policy;
    options.duration_s = kRunSeconds;
    test::simulate(scenario, {}, options, &log);
    events = std::move(log.events);
  }
  return events;
}

std::size_t countRequests(const std::vector<Event>& events, std::size_t from, std::size_t to) {
  std::size_t n = 0;
  for (std::size_t i = from; i < to; ++i) n += std::holds_alternative<RequestDone>(events[i].payload);
  return n;
}

// The request ids of the newest finished requests whose decisions the store still holds.
std::vector<RequestId> decidedRequests(const TelemetryStore& store, std::size_t how_many) {
  std::vector<RequestId> out;
  const auto& ring = store.requests();
  for (auto it = ring.rbegin(); it != ring.rend() && out.size() < how_many; ++it)
    if (store.decisionFor(it->request)) out.push_back(it->request);
  return out;
}

}  // namespace

class TestDecisionInspector : public QObject {
  Q_OBJECT
 private slots:
  // A failure a log line reported without naming its request shows dashes, not an invented
  // request 0 / session 0 / turn 0 / direct path, and says where it came from.
  void aFailureWithoutItsRequestInventsNothing() {
    RequestDone d;
    d.worker = 1;
    d.status = RequestStatus::Failed;
    d.error = "Decode instance could be dead";
    RequestTableModel model;
    model.sync(std::deque<RequestDone>{d}, std::deque<SimTime>{secondsToTime(5)});
    QCOMPARE(model.rowCount(), 1);
    const QString dash = QStringLiteral("—");
    for (int c :
         {RequestTableModel::Request, RequestTableModel::Session, RequestTableModel::Turn, RequestTableModel::Path})
      QCOMPARE(model.index(0, c).data().toString(), dash);
    QCOMPARE(model.index(0, RequestTableModel::Status).data().toString(),
             QString::fromLatin1(toString(RequestStatus::Failed)));
    const QString tip = model.index(0, RequestTableModel::Request).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("names no request")) && tip.contains(QStringLiteral("could be dead")),
             qPrintable(tip));
  }

  void requestTableFollowsTheRing_data() {
    QTest::addColumn<int>("batches");
    QTest::addColumn<int>("ring");
    QTest::newRow("one batch") << 1 << 80;
    QTest::newRow("3 batches, each larger than the ring") << 3 << 40;
    QTest::newRow("25 batches") << 25 << 80;
    QTest::newRow("200 batches") << 200 << 80;
  }
  void requestTableFollowsTheRing() {
    QFETCH(int, batches);
    QFETCH(int, ring);
    const std::vector<Event>& events = runEvents("e3-load-floor");
    const std::size_t total = countRequests(events, 0, events.size());
    QVERIFY2(total > 2 * static_cast<std::size_t>(ring), "the run must overflow the ring");

    TelemetryStore::Limits limits;
    limits.requests = static_cast<std::size_t>(ring);
    TelemetryStore store(limits);
    RequestTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);

    bool every_batch_fits = true;
    const std::size_t step = (events.size() + batches - 1) / static_cast<std::size_t>(batches);
    for (std::size_t from = 0; from < events.size(); from += step) {
      const std::size_t to = std::min(events.size(), from + step);
      // A frame that brings a full ring of requests leaves nothing in common with the last one.
      if (from > 0 && countRequests(events, from, to) >= static_cast<std::size_t>(ring)) every_batch_fits = false;
      store.ingest(std::vector<Event>(events.begin() + static_cast<std::ptrdiff_t>(from),
                                      events.begin() + static_cast<std::ptrdiff_t>(to)));
      model.sync(store.requests(), store.requestTimes());

      QCOMPARE(model.rowCount(), static_cast<int>(store.requests().size()));
      for (int row = 0; row < model.rowCount(); ++row) {
        QCOMPARE(model.requestAt(row).request, store.requests()[static_cast<std::size_t>(row)].request);
        QCOMPARE(model.finishedAt(row), store.requestTimes()[static_cast<std::size_t>(row)]);
      }
    }
    QCOMPARE(model.rowCount(), ring);
    QVERIFY(inserted.count() > 0);
    if (batches > 1) QVERIFY(removed.count() > 0 || resets.count() > 0);
    if (every_batch_fits) {
      QCOMPARE(resets.count(), 0);
      if (batches > 1) QVERIFY(removed.count() > 0);
    }

    // A new run: the store is cleared, the table empties.
    store.clear();
    model.sync(store.requests(), store.requestTimes());
    QCOMPARE(model.rowCount(), 0);
  }

  void decisionShowsEveryCandidate_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("component");  // one the policy must show as a column
    QTest::addColumn<bool>("lower_wins");
    QTest::newRow("kv-aware, load floor") << "e3-load-floor"
                                          << ""
                                          << "floor_bonus" << false;
    QTest::newRow("exclusive-overlap") << "e3-load-floor"
                                       << "exclusive-overlap"
                                       << "floor_bonus" << false;
    QTest::newRow("lmetric") << "e3-load-floor"
                             << "lmetric"
                             << "num_requests" << true;
    QTest::newRow("unified-gated") << "unified-vs-lmetric"
                                   << "unified-gated"
                                   << "new_uncached" << true;
    QTest::newRow("unified") << "unified-vs-lmetric"
                             << "unified"
                             << "contention_s" << true;
  }
  void decisionShowsEveryCandidate() {
    QFETCH(QString, scenario);
    QFETCH(QString, policy);
    QFETCH(QString, component);
    QFETCH(bool, lower_wins);
    TelemetryStore store;
    store.ingest(runEvents(scenario.toStdString(), policy.toStdString()));
    ViewState view;
    DecisionInspectorPanel panel(view);
    auto* decision_table = panel.findChild<QTableView*>(QStringLiteral("decisionTable"));
    QAbstractItemModelTester tester(decision_table->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.refresh(store);
    const auto* summary = panel.findChild<QLabel*>(QStringLiteral("decisionSummary"));
    const auto* explanation = panel.findChild<QLabel*>(QStringLiteral("decisionExplanation"));

    const std::vector<RequestId> requests = decidedRequests(store, 12);
    QVERIFY(!requests.empty());
    for (RequestId request : requests) {
      view.selectRequest(request);
      const RouteDecision& decision = *store.decisionFor(request);
      const DecisionModel& model = panel.decision();
      QCOMPARE(model.rowCount(), static_cast<int>(decision.candidates.size()));
      QCOMPARE(decision_table->model()->rowCount(), model.rowCount());
      QVERIFY(model.chosenRow() >= 0);
      QCOMPARE(decision.candidates[static_cast<std::size_t>(model.chosenRow())].worker, decision.chosen);
      QVERIFY(
          model.index(model.chosenRow(), DecisionModel::Worker).data().toString().contains(QStringLiteral("chosen")));
      QVERIFY(model.index(model.chosenRow(), 0).data(Qt::FontRole).value<QFont>().bold());

      // Every component is a column, with each candidate's value in it.
      const int column = DecisionModel::FirstComponent + static_cast<int>(model.componentNames().indexOf(component));
      QVERIFY2(column >= DecisionModel::FirstComponent, qPrintable(model.componentNames().join(',')));
      QCOMPARE(model.headerData(column, Qt::Horizontal, DecisionModel::ComponentRole).toString(), component);
      for (int row = 0; row < model.rowCount(); ++row) {
        const CandidateScore& c = decision.candidates[static_cast<std::size_t>(row)];
        QCOMPARE(model.index(row, column).data(DecisionModel::SortRole).toDouble(),
                 c.component(component.toLatin1().constData()));
        QCOMPARE(model.index(row, DecisionModel::Score).data(DecisionModel::SortRole).toDouble(), c.score);
      }

      const QString chosen_name =
          QString::fromStdString(store.run()->workers[static_cast<std::size_t>(decision.chosen)].name);
      QVERIFY2(
          summary->text().contains(QString::fromStdString(decision.policy) + QStringLiteral(" chose ") + chosen_name),
          qPrintable(summary->text()));
      QVERIFY(explanation->text().startsWith(lower_wins ? QStringLiteral("Lower score wins")
                                                        : QStringLiteral("Higher score wins")));
      // unified-gated's decision dict: affinity or fallback, the tie-break it used.
      if (policy == QLatin1String("unified-gated")) {
        QVERIFY2(explanation->text().contains(QStringLiteral("decision ")), qPrintable(explanation->text()));
        QVERIFY2(explanation->text().contains(QStringLiteral("tie break ")), qPrintable(explanation->text()));
      }
    }
  }

  void tableAndViewStateSelectTogether() {
    TelemetryStore store;
    store.ingest(runEvents("e3-load-floor"));
    ViewState view;
    DecisionInspectorPanel panel(view);
    panel.refresh(store);
    auto* table = panel.findChild<QTableView*>(QStringLiteral("requestTable"));
    QSignalSpy selected(&view, &ViewState::requestSelected);

    // A click in the table selects the request everywhere.
    const std::vector<RequestId> requests = decidedRequests(store, 40);
    QVERIFY(requests.size() >= 2);
    const int row = *panel.requests().rowOf(requests.back());
    table->selectionModel()->setCurrentIndex(table->model()->index(row, 0),
                                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).value<RequestId>(), requests.back());
    QCOMPARE(view.selectedRequest(), requests.back());
    QCOMPARE(panel.decision().decision()->request, requests.back());

    // A selection made elsewhere (the timeline) moves the table's row, without echoing back.
    view.selectRequest(requests.front());
    QCOMPARE(selected.count(), 2);
    QCOMPARE(table->selectionModel()->currentIndex().data(RequestTableModel::RequestIdRole).value<RequestId>(),
             requests.front());
    QCOMPARE(panel.decision().decision()->request, requests.front());
  }

  // A selected request's spans, Perfetto-like: on a disaggregated run a request that went through
  // a KV transfer shows its prefill lane, the P -> D transfer and its decode, each the length its
  // events give; one served without a transfer shows its decode alone. Drawn on a real widget.
  void aSelectedRequestShowsItsSpans() {
    const std::vector<Event>& events = runEvents("e2-cold-d");
    TelemetryStore store;
    store.ingest(events);
    ViewState view;
    DecisionInspectorPanel panel(view);
    panel.resize(900, 500);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.refresh(store);
    auto* spans = panel.findChild<RequestSpanView*>(QStringLiteral("requestSpans"));
    QVERIFY(spans);
    std::map<RequestId, SimTime> transfer_start, transfer_end;
    for (const Event& e : events) {
      if (const auto* s = std::get_if<TransferStarted>(&e.payload)) transfer_start[s->request] = e.time;
      if (const auto* f = std::get_if<TransferFinished>(&e.payload)) transfer_end[f->request] = e.time;
    }
    bool saw_transfer = false, saw_direct = false;
    for (const RequestDone& d : store.requests()) {
      if (d.status != RequestStatus::Ok || (saw_transfer && saw_direct)) continue;
      const bool transferred = transfer_start.count(d.request) && transfer_end.count(d.request);
      if ((transferred && saw_transfer) || (!transferred && saw_direct)) continue;
      view.selectRequest(d.request);
      QVERIFY(spans->trace() && spans->trace()->request == d.request);
      const QStringList lanes = spans->laneTexts();
      const QString name = QStringLiteral("D%1").arg(d.worker);
      if (transferred) {
        saw_transfer = true;
        QCOMPARE(lanes.size(), 3);
        const double prefill = timeToSeconds(transfer_start[d.request] - spans->trace()->arrival);
        const double transfer = timeToSeconds(transfer_end[d.request] - transfer_start[d.request]);
        QVERIFY2(lanes[0].startsWith(QStringLiteral("P0: queue + prefill %1 s").arg(prefill, 0, 'f', 3)),
                 qPrintable(lanes[0]));
        QVERIFY2(lanes[1].startsWith(QStringLiteral("P0 -> %1: KV transfer %2 s").arg(name).arg(transfer, 0, 'f', 3)),
                 qPrintable(lanes[1]));
      } else {
        saw_direct = true;
        QCOMPARE(lanes.size(), 1);
      }
      QVERIFY2(lanes.last().startsWith(name + QStringLiteral(": decode")), qPrintable(lanes.last()));
      QVERIFY2(lanes.last().contains(QStringLiteral("first token at +%1 s").arg(timeToSeconds(d.ttft), 0, 'f', 3)),
               qPrintable(lanes.last()));
      if (qEnvironmentVariableIsSet("KVSCOPE_SPANS_PNG"))
        panel.grab().save(qEnvironmentVariable("KVSCOPE_SPANS_PNG") + (transferred ? "-transfer.png" : "-direct.png"));
    }
    QVERIFY(saw_transfer && saw_direct);
    view.selectRequest(0);
    QVERIFY(!spans->trace());
  }

  void aDroppedDecisionSaysSo() {
    TelemetryStore::Limits limits;
    limits.decisions = 20;  // far fewer decisions than finished requests
    TelemetryStore store(limits);
    store.ingest(runEvents("e3-load-floor"));
    ViewState view;
    DecisionInspectorPanel panel(view);
    panel.refresh(store);
    const RequestId oldest = store.requests().front().request;
    QVERIFY(!store.decisionFor(oldest));
    view.selectRequest(oldest);
    QCOMPARE(panel.decision().rowCount(), 0);
    const auto* summary = panel.findChild<QLabel*>(QStringLiteral("decisionSummary"));
    QVERIFY2(summary->text().contains(QStringLiteral("no longer held")), qPrintable(summary->text()));

    // A decision still held shows as usual.
    const std::vector<RequestId> held = decidedRequests(store, 1);
    QVERIFY(!held.empty());
    view.selectRequest(held.front());
    QCOMPARE(panel.decision().rowCount(), static_cast<int>(store.decisionFor(held.front())->candidates.size()));
  }
};

QTEST_MAIN(TestDecisionInspector)
#include "test_decision_inspector.moc"
