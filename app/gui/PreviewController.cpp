#include "app/gui/PreviewController.h"

#include <QCoreApplication>
#include <QPointer>

#include "app/gui/PanelDocks.h"
#include "core/run/BackgroundWork.h"
#include "core/run/WhatIfPreview.h"
#include "core/source/Source.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"
#include "widgets/knobs/KnobsPanel.h"
#include "widgets/knobs/WhatIfPanel.h"
#include "widgets/knobs/WhatIfTable.h"

namespace kvscope {

namespace {
QString describe(const ControlStep& change) {
  QStringList parts;
  for (const auto& [name, value] : change.knobs)
    parts << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
  if (change.policy) parts << QStringLiteral("policy %1").arg(QString::fromStdString(*change.policy));
  return parts.join(QStringLiteral(", "));
}
}  // namespace

PreviewController::PreviewController(RunSession& session, ViewState& view, PanelDocks& docks, QObject* parent)
    : QObject(parent),
      session_(session),
      view_(view),
      docks_(docks),
      knobs_(docks.knobs()),
      kv_(docks.kvPools()),
      table_(docks.whatIf().table()) {
  debounce_.setSingleShot(true);
  debounce_.setInterval(150);  // a dragged slider or line settles before a fork starts
  connect(&debounce_, &QTimer::timeout, this, [this] { start(); });
  staleness_.setInterval(500);
  connect(&staleness_, &QTimer::timeout, this, [this] { table_.setNow(session_.store().now()); });  // its age
  staleness_.start();
  connect(&knobs_, &KnobsPanel::editsChanged, this, &PreviewController::schedule);
  // A released slider or Enter: the edit is over, the preview starts now (150 ms sooner).
  connect(&knobs_, &KnobsPanel::editFinished, this, [this] {
    schedule();
    debounce_.stop();
    start();
  });
  knobs_.setApplyCheck([this] { return refuseStale(); });
  connect(&session_, &RunSession::sourceChanged, this, &PreviewController::clear);
}

PreviewController::~PreviewController() {
  if (running_) running_->store(true);
}

void PreviewController::schedule() {
  const KnobEditModel::Change pending = knobs_.edits().edits();
  std::map<std::string, double> lines = knobs_.edits().pendingKnobs();
  for (const auto& [name, value] : pending.knobs) lines[name] = value;
  kv_.setPendingKnobs(lines);
  debounce_.start();
}

void PreviewController::start() {
  if (knobs_.sliderHeld()) return;  // a slider in a drag: its release previews (editFinished)
  Source* source = session_.source();
  const KnobEditModel::Change pending = knobs_.edits().edits();
  if (pending.knobs.empty() && !pending.policy) return clear();
  if (!source || !source->capabilities().preview) {
    clear();
    table_.setPreview(nullptr,
                      tr("No preview here: it forks a simulation (embedded, or served by kvscope-cli serve)."));
    return;
  }
  const TelemetryStore& store = session_.store();
  ControlStep change{store.now(), pending.knobs, pending.policy};
  QString note;
  // K steers only where new sessions bind: say so when there are none to steer.
  if (change.knobs.count("K")) {
    const long fresh = store.newSessionsSince(store.now() - secondsToTime(kNewSessionsWindowS));
    if (fresh == 0) {
      const std::optional<SimTime> last = store.lastNewSession();
      note = last ? tr("K only moves new sessions; the last one started at %1 s.").arg(timeToSeconds(*last), 0, 'f', 1)
                  : tr("K only moves new sessions; none has started yet.");
    }
  }
  if (running_) running_->store(true);  // a newer value: the old fork's answer is of no use
  running_ = std::make_shared<std::atomic<bool>>(false);
  const std::uint64_t generation = ++generation_;
  docks_.raiseWhatIf();
  table_.setComputing(tr("Previewing %1 over the next %2 simulated min...")
                          .arg(describe(change))
                          .arg(timeToSeconds(horizon_) / 60, 0, 'f', 0));
  // The source forks on a thread of its own (embedded) or on the server (served); the answer comes
  // back here through the event loop, and only if this controller still exists.
  source->preview(change, horizon_, running_,
                  [guard = QPointer<PreviewController>(this), generation, note](std::shared_ptr<WhatIfResult> result,
                                                                                const std::string& error) {
                    if (result && result->cancelled) return;
                    QCoreApplication* app = QCoreApplication::instance();
                    if (!app) return;
                    QMetaObject::invokeMethod(
                        app,
                        [guard, result, generation, note, error] {
                          if (guard) guard->show(result, generation, note, QString::fromStdString(error));
                        },
                        Qt::QueuedConnection);
                  });
}

void PreviewController::show(std::shared_ptr<WhatIfResult> result, std::uint64_t generation, const QString& note,
                             const QString& error) {
  if (generation != generation_) return;  // a newer fork is on its way: its table, not this one
  running_.reset();
  if (!result) {  // refused or failed (a served run's answer): say why, draw nothing
    last_.reset();
    docks_.setPreview(nullptr);
    table_.setPreview(nullptr, tr("No preview: %1").arg(error));
    return;
  }
  last_ = std::move(result);
  docks_.setPreview(last_.get());
  table_.setPreview(last_.get(), note);
  view_.setLookahead(horizon_);
  view_.advanceLive(session_.store().now());  // the future in view now, not at the next frame
  emit previewShown();
}

// A preview is a forecast from its fork: once the run has moved a tenth of the horizon on, what it
// promised is no longer what Apply would do (a preview from 921 s promised D2 42.3%, was applied
// at 995 s, and D2 got 0%). Apply then previews again from now instead, and says so.
QString PreviewController::refuseStale() {
  if (!last_ || running_) return {};
  const SimTime age = session_.store().now() - last_->from;
  if (age < horizon_ / 10) return {};
  start();
  return tr("Not applied: the preview was %1 s old. Previewing again from now; Apply once it is shown.")
      .arg(timeToSeconds(age), 0, 'f', 0);
}

void PreviewController::clear() {
  debounce_.stop();
  if (running_) running_->store(true);
  running_.reset();
  ++generation_;
  last_.reset();
  docks_.setPreview(nullptr);
  kv_.setPendingKnobs(knobs_.edits().pendingKnobs());
  table_.setPreview(nullptr);
  view_.setLookahead(0);
  view_.advanceLive(session_.store().now());
  giveFreeHeapBack();  // the futures' series (at 64 D, hundreds of MB kept after Revert otherwise)
}

}  // namespace kvscope
