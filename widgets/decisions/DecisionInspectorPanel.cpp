#include "widgets/decisions/DecisionInspectorPanel.h"

#include <algorithm>

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"
#include "widgets/decisions/DecisionModel.h"
#include "widgets/decisions/RequestSpanView.h"
#include "widgets/decisions/RequestTableModel.h"

namespace kvscope {

namespace {

QTableView* makeTable(QAbstractItemModel* model, const QString& name, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setObjectName(name);
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setWordWrap(false);
  table->verticalHeader()->hide();
  // Fixed row heights: the view never measures 20,000 rows of text.
  table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  table->horizontalHeader()->setStretchLastSection(true);
  return table;
}

QString secondsText(SimTime t) { return QString::number(timeToSeconds(t), 'f', 2); }

}  // namespace

DecisionInspectorPanel::DecisionInspectorPanel(ViewState& view, QWidget* parent) : TelemetryPanel(view, parent) {
  requests_ = new RequestTableModel(this);
  sorted_requests_ = new QSortFilterProxyModel(this);
  sorted_requests_->setSourceModel(requests_);
  sorted_requests_->setSortRole(RequestTableModel::SortRole);
  decision_ = new DecisionModel(this);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  request_table_ = makeTable(sorted_requests_, QStringLiteral("requestTable"), splitter);
  // Arrival order until the operator clicks a header; clicking it again returns to arrival order.
  request_table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  request_table_->horizontalHeader()->setSortIndicatorClearable(true);
  request_table_->setSortingEnabled(true);
  request_table_->setVerticalScrollMode(QAbstractItemView::ScrollPerItem);
  splitter->addWidget(request_table_);
  // A 1280x800 screen leaves this tab ~200 px: both tables may shrink to a few rows each.
  request_table_->setMinimumHeight(50);

  // The selected request's prefill, transfer and decode, between its row and its decision: a pane
  // of its own, so a short tab squeezes it (or the operator drags it shut) before the decision.
  // Always there: a pane that opened on a click moved the rows under the pointer mid-click.
  spans_ = new RequestSpanView(splitter);
  splitter->addWidget(spans_);

  auto* decision_box = new QWidget(splitter);
  auto* decision_layout = new QVBoxLayout(decision_box);
  decision_layout->setContentsMargins(0, 0, 0, 0);
  summary_ = new QLabel(decision_box);
  summary_->setObjectName(QStringLiteral("decisionSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  explanation_ = new QLabel(decision_box);
  explanation_->setObjectName(QStringLiteral("decisionExplanation"));
  explanation_->setWordWrap(true);
  decision_table_ = makeTable(decision_, QStringLiteral("decisionTable"), decision_box);
  decision_table_->setMinimumHeight(50);
  decision_table_->setSelectionMode(QAbstractItemView::NoSelection);
  decision_layout->addWidget(summary_);
  decision_layout->addWidget(explanation_);
  decision_layout->addWidget(decision_table_, 1);
  splitter->addWidget(decision_box);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 0);
  splitter->setStretchFactor(2, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(splitter);

  connect(request_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { onRequestRowChanged(current); });
  connect(&view, &ViewState::requestSelected, this, &DecisionInspectorPanel::onRequestSelected);
  showDecision();
}

DecisionInspectorPanel::~DecisionInspectorPanel() = default;

void DecisionInspectorPanel::refresh(const TelemetryStore& store) {
  store_ = &store;
  std::vector<QString> names;
  if (store.run())
    for (const WorkerInfo& w : store.run()->workers) names.push_back(QString::fromStdString(w.name));
  if (names != worker_names_) {
    worker_names_ = names;
    requests_->setWorkerNames(names);
    decision_->setWorkerNames(std::move(names));
  }

  QScrollBar* bar = request_table_->verticalScrollBar();
  const bool following = bar->value() >= bar->maximum();
  const bool arrival_order = sorted_requests_->sortColumn() < 0;
  const RequestTableModel::SyncResult sync = requests_->sync(store.requests(), store.requestTimes());
  if (arrival_order && following && sync.inserted > 0) {
    request_table_->scrollToBottom();
  } else if (arrival_order && !following && sync.removed > 0 && !sync.reset) {
    // Rows dropped above the viewport would slide what the operator reads upward; hold it still.
    bar->setValue(std::max(0, bar->value() - sync.removed));
  }
  // A request picked before its decision (or its end) reached the store: look again.
  if (shown_ != 0 && waiting_for_decision_) showDecision();
}

void DecisionInspectorPanel::onRequestRowChanged(const QModelIndex& current) {
  if (syncing_selection_ || !current.isValid()) return;
  const RequestId request = current.data(RequestTableModel::RequestIdRole).toULongLong();
  if (request == 0) {  // a failure a log line reported without naming its request: nothing to inspect
    const RequestDone& done = requests_->requestAt(sorted_requests_->mapToSource(current).row());
    shown_ = 0;
    decision_->clear();
    explanation_->clear();
    summary_->setText(tr("On %1: %2").arg(workerLabel(worker_names_, done.worker), unnamedFailureText(done)));
    return;
  }
  if (request != shown_) view().selectRequest(request);  // comes back through onRequestSelected
}

void DecisionInspectorPanel::onRequestSelected(RequestId request) {
  shown_ = request;
  showDecision();
  selectRowOf(request);
}

void DecisionInspectorPanel::selectRowOf(RequestId request) {
  QItemSelectionModel* selection = request_table_->selectionModel();
  const auto row = requests_->rowOf(request);
  syncing_selection_ = true;
  if (!row) {
    selection->clearSelection();  // picked elsewhere and not (or no longer) in the table
  } else {
    const QModelIndex index = sorted_requests_->mapFromSource(requests_->index(*row, 0));
    if (selection->currentIndex().row() != index.row()) {
      selection->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
      request_table_->scrollTo(index);
    }
  }
  syncing_selection_ = false;
}

void DecisionInspectorPanel::showSpans() {
  std::optional<RequestTrace> trace = store_ && shown_ != 0 ? store_->requestTraces().find(shown_) : std::nullopt;
  RequestSpanView::Names names;
  if (trace) {
    names.decode = workerLabel(worker_names_, trace->worker);
    const std::optional<RunStarted>& run = store_->run();
    if (trace->transfer && run && trace->transfer->prefill >= 0 &&
        trace->transfer->prefill < static_cast<std::int32_t>(run->prefill.size()))
      names.prefill = QString::fromStdString(run->prefill[static_cast<std::size_t>(trace->transfer->prefill)].name);
    else if (trace->transfer)
      names.prefill = QStringLiteral("P%1").arg(trace->transfer->prefill);
  }
  if (trace != spans_->trace() || !trace) spans_->setTrace(trace, names, shown_ != 0);
}

void DecisionInspectorPanel::showDecision() {
  waiting_for_decision_ = false;
  showSpans();
  if (shown_ == 0) {
    decision_->clear();
    summary_->setText(tr("Select a request in the table, or on the timeline, to see why it went where it did."));
    explanation_->clear();
    return;
  }
  const RouteDecision* decision = store_ ? store_->decisionFor(shown_) : nullptr;
  const auto row = requests_->rowOf(shown_);
  const RequestDone* done = row ? &requests_->requestAt(*row) : nullptr;

  QString outcome;
  if (done) {
    outcome = done->status == RequestStatus::Ok
                  ? tr("It finished on %1 via %2 (TTFT %3 s, E2E %4 s).")
                        .arg(workerLabel(worker_names_, done->worker), QString::fromLatin1(toString(done->path)),
                             done->ttft < 0 ? QStringLiteral("—") : secondsText(done->ttft), secondsText(done->e2e))
                  : tr("It failed on %1 via %2: %3")
                        .arg(workerLabel(worker_names_, done->worker), QString::fromLatin1(toString(done->path)),
                             QString::fromStdString(done->error));
  }

  if (!decision) {
    // Keep what is shown if it is this request's (the store dropped it since); else say so.
    if (decision_->decision() && decision_->decision()->request == shown_) return;
    decision_->clear();
    explanation_->clear();
    if (done) {
      summary_->setText(tr("Request %1: its route decision is no longer held (the console keeps only the most "
                           "recent decisions). %2")
                            .arg(shown_)
                            .arg(outcome));
    } else {
      summary_->setText(tr("Request %1: no route decision for it is held yet.").arg(shown_));
      waiting_for_decision_ = true;
    }
    return;
  }

  if (!decision_->decision() || decision_->decision()->request != shown_) decision_->setDecision(*decision);
  QString summary =
      tr("Request %1 (session %2, turn %3): %4 chose %5.")
          .arg(shown_)
          .arg(decision->session)
          .arg(decision->turn)
          .arg(QString::fromStdString(decision->policy),
               decision->chosen == kNoWorker ? tr("no worker") : workerLabel(worker_names_, decision->chosen));
  if (done) {
    summary += QLatin1Char(' ') + outcome;
    if (decision->chosen != kNoWorker && done->worker != decision->chosen)
      summary += QLatin1Char(' ') + tr("Not the policy's choice: admission retried or fell back to another worker.");
  } else {
    waiting_for_decision_ = true;  // still running: show how it ends once it does
  }
  if (const std::size_t omitted = store_->candidatesOmitted(shown_); omitted > 0)
    summary += QLatin1Char(' ') + tr("(%n lower-ranked candidate(s) not kept.)", nullptr, static_cast<int>(omitted));
  summary_->setText(summary);
  explanation_->setText(explainDecision(*decision, worker_names_));
}

}  // namespace kvscope
