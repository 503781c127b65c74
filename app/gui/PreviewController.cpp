#include "gui/PreviewController.h"

#include <QCoreApplication>
#include <QPointer>

#include <thread>

#include "KnobsPanel.h"
#include "KvPoolPanel.h"
#include "ViewState.h"
#include "WhatIfTable.h"
#include "gui/RunSession.h"
#include "run/WhatIfPreview.h"
#include "source/EmbeddedSimulationSource.h"

namespace kvscope {

namespace {
// The run's knob and policy changes so far, one step per instant, for the fork to replay.
std::vector<ControlStep> history(const TelemetryStore& store) {
  std::vector<ControlStep> steps;
  for (const Event& e : store.controlChanges()) {
    if (steps.empty() || steps.back().time != e.time) steps.push_back(ControlStep{e.time, {}, {}});
    if (const auto* k = std::get_if<KnobChanged>(&e.payload)) steps.back().knobs[k->name] = k->new_value;
    if (const auto* p = std::get_if<PolicyChanged>(&e.payload)) steps.back().policy = p->new_policy;
  }
  return steps;
}

QString describe(const ControlStep& change) {
  QStringList parts;
  for (const auto& [name, value] : change.knobs) parts << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
  if (change.policy) parts << QStringLiteral("policy %1").arg(QString::fromStdString(*change.policy));
  return parts.join(QStringLiteral(", "));
}
}  // namespace

PreviewController::PreviewController(RunSession& session, ViewState& view, KnobsPanel& knobs, KvPoolPanel& kv,
                                     WhatIfTable& table, QObject* parent)
    : QObject(parent), session_(session), view_(view), knobs_(knobs), kv_(kv), table_(table) {
  debounce_.setSingleShot(true);
  debounce_.setInterval(150);  // a dragged slider or line settles before a fork starts
  connect(&debounce_, &QTimer::timeout, this, &PreviewController::start);
  connect(&knobs_, &KnobsPanel::editsChanged, this, &PreviewController::schedule);
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
  auto* sim = dynamic_cast<EmbeddedSimulationSource*>(session_.source());
  const KnobEditModel::Change pending = knobs_.edits().edits();
  if (pending.knobs.empty() && !pending.policy) return clear();
  if (!sim) {
    clear();
    table_.setPreview(nullptr, tr("No preview here: it forks a simulation run inside this console."));
    return;
  }
  const TelemetryStore& store = session_.store();
  ControlStep change{store.now(), pending.knobs, pending.policy};
  QString note;
  // K steers only where new sessions bind: say so when there are none to steer.
  if (change.knobs.count("K")) {
    const long fresh = store.newSessionsSince(store.now() - secondsToTime(300));
    if (fresh == 0) note = tr("K only moves new sessions; 0 new sessions in the last 5 min.");
  }
  if (running_) running_->store(true);  // a newer value: the old fork's answer is of no use
  running_ = std::make_shared<std::atomic<bool>>(false);
  const std::uint64_t generation = ++generation_;
  table_.setComputing(tr("Previewing %1 over the next %2 simulated min...").arg(describe(change)).arg(timeToSeconds(horizon_) / 60, 0, 'f', 0));
  // The fork owns copies of what it reads: the source may be replaced while it runs.
  auto run = std::make_shared<PreparedRun>(sim->prepared());
  auto steps = history(store);
  const SimTime now = store.now(), horizon = horizon_;
  std::thread([run, steps = std::move(steps), change, now, horizon, cancel = running_, guard = QPointer<PreviewController>(this),
               generation, note] {
    auto result = std::make_shared<WhatIfResult>(WhatIfPreview(*run, steps).run(now, horizon, change, cancel.get()));
    if (result->cancelled) return;
    QCoreApplication* app = QCoreApplication::instance();
    if (!app) return;
    QMetaObject::invokeMethod(
        app,
        [guard, result, generation, note] {
          if (guard) guard->show(result, generation, note);
        },
        Qt::QueuedConnection);
  }).detach();
}

void PreviewController::show(std::shared_ptr<WhatIfResult> result, std::uint64_t generation, const QString& note) {
  if (generation != generation_) return;  // a newer fork is on its way: its table, not this one
  running_.reset();
  last_ = std::move(result);
  kv_.setPreview(last_.get());
  table_.setPreview(last_.get(), note);
  view_.setLookahead(horizon_);
  view_.advanceLive(session_.store().now());  // the future in view now, not at the next frame
  emit previewShown();
}

void PreviewController::clear() {
  debounce_.stop();
  if (running_) running_->store(true);
  running_.reset();
  ++generation_;
  last_.reset();
  kv_.setPreview(nullptr);
  kv_.setPendingKnobs(knobs_.edits().pendingKnobs());
  table_.setPreview(nullptr);
  view_.setLookahead(0);
  view_.advanceLive(session_.store().now());
}

}  // namespace kvscope
