#include "widgets/timeline/ReplayControlsPanel.h"

#include <algorithm>

#include <QSignalBlocker>

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/source/Source.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"
#include "widgets/timeline/ReplayScrubber.h"

namespace kvscope {

namespace {
constexpr double kSpeeds[] = {0.25, 0.5, 1, 2, 5, 10, 25, 50, 100};
constexpr TimelineKind kJumpKinds[] = {
    TimelineKind::Crash,      TimelineKind::LinkDead,       TimelineKind::Eviction,
    TimelineKind::Reseed,     TimelineKind::TransferFailed, TimelineKind::Correction,
    TimelineKind::Retraction, TimelineKind::KnobChange,     TimelineKind::PolicyChange};
// Lands a little before the event so it is replayed (and selectable) right after the seek.
constexpr SimTime kLeadIn = secondsToTime(1);
}  // namespace

ReplayControlsPanel::ReplayControlsPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      play_(new QToolButton(this)),
      speed_(new QComboBox(this)),
      kind_(new QComboBox(this)),
      previous_(new QToolButton(this)),
      next_(new QToolButton(this)),
      time_(new QLabel(this)),
      scrubber_(new ReplayScrubber(this)) {
  // A note jumped to (the Notes panel): the replay goes there, as a timeline jump does.
  connect(&view, &ViewState::jumpRequested, this, [this](SimTime time) { seek(time); });
  play_->setText(tr("Play/Pause"));
  play_->setToolTip(tr("Pause or resume the replay (Space)"));
  for (double s : kSpeeds) speed_->addItem(QStringLiteral("%1x").arg(s), s);
  speed_->setCurrentIndex(speed_->findData(10.0));
  for (TimelineKind k : kJumpKinds) kind_->addItem(timelineKindLabel(k), static_cast<int>(k));
  previous_->setText(tr("< Previous"));
  previous_->setToolTip(tr("Seek to the previous event of this kind (Shift+Left)"));
  next_->setText(tr("Next >"));
  next_->setToolTip(tr("Seek to the next event of this kind (Shift+Right)"));

  auto* row = new QHBoxLayout;
  row->addWidget(play_);
  row->addWidget(new QLabel(tr("Speed:"), this));
  row->addWidget(speed_);
  row->addSpacing(12);
  row->addWidget(new QLabel(tr("Jump to:"), this));
  row->addWidget(kind_);
  row->addWidget(previous_);
  row->addWidget(next_);
  row->addStretch(1);
  row->addWidget(time_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(row);
  layout->addWidget(scrubber_);
  setMaximumHeight(sizeHint().height() + 12);  // a control bar, not a pane

  connect(play_, &QToolButton::clicked, this, [this] {
    RunControl* run = control();
    if (!run) return;
    if (source_->status().state == SourceState::Paused) {
      run->resume(consoleAuthor());
    } else {
      run->pause(consoleAuthor());
    }
  });
  connect(speed_, &QComboBox::currentIndexChanged, this, [this] {
    if (RunControl* run = control()) run->setSpeed(speed_->currentData().toDouble(), consoleAuthor());
  });
  connect(previous_, &QToolButton::clicked, this, [this] { jump(-1); });
  connect(next_, &QToolButton::clicked, this, [this] { jump(+1); });
  connect(scrubber_, &ReplayScrubber::seekRequested, this, &ReplayControlsPanel::seek);

  // Arrow keys step through the replay from anywhere in the window.
  auto shortcut = [this](const QKeySequence& keys, auto fn) {
    auto* a = new QAction(this);
    a->setShortcut(keys);
    a->setShortcutContext(Qt::WindowShortcut);
    connect(a, &QAction::triggered, this, fn);
    addAction(a);
  };
  shortcut(QKeySequence(Qt::Key_Left), [this] { step(-secondsToTime(5)); });
  shortcut(QKeySequence(Qt::Key_Right), [this] { step(secondsToTime(5)); });
  shortcut(QKeySequence(Qt::SHIFT | Qt::Key_Left), [this] { jump(-1); });
  shortcut(QKeySequence(Qt::SHIFT | Qt::Key_Right), [this] { jump(+1); });
  updateEnabled();
}

void ReplayControlsPanel::setSource(Source* source) {
  source_ = source;
  pending_.reset();
  overview_ = source ? source->overview() : nullptr;
  std::vector<SimTime> times;
  if (overview_)
    for (const Event& e : *overview_) times.push_back(e.time);
  scrubber_->setDensity(std::move(times), source ? source->status().end : 0);
  scrubber_->setPosition(0);
  updateEnabled();
}

RunControl* ReplayControlsPanel::control() const { return source_ ? source_->control() : nullptr; }

void ReplayControlsPanel::updateEnabled() {
  const bool seekable = source_ && source_->capabilities().seek;
  for (QWidget* w : std::initializer_list<QWidget*>{play_, speed_, kind_, previous_, next_, scrubber_})
    w->setEnabled(seekable);
  time_->setText(seekable ? QString() : tr("Replay controls work on recordings (File > Open recording)"));
}

void ReplayControlsPanel::setKind(TimelineKind kind) {
  const int i = kind_->findData(static_cast<int>(kind));
  if (i >= 0) kind_->setCurrentIndex(i);
}

void ReplayControlsPanel::setSpeed(double speed) {
  const int i = speed_->findData(speed);
  if (i >= 0) speed_->setCurrentIndex(i);
}

void ReplayControlsPanel::seek(SimTime time) {
  RunControl* run = control();
  if (!run || !source_->capabilities().seek) return;
  std::string error;
  if (!run->seek(std::clamp<SimTime>(time, 0, scrubber_->end()), consoleAuthor(), &error))
    time_->setText(QString::fromStdString(error));
}

void ReplayControlsPanel::step(SimTime delta) {
  if (!source_) return;
  seek(source_->status().time + delta);
}

bool ReplayControlsPanel::jump(int direction) {
  if (!source_ || !overview_) return false;
  const auto kind = static_cast<TimelineKind>(kind_->currentData().toInt());
  // From the event being aimed at (if any), else from the replay's position.
  const SimTime from = pending_ ? pending_->time : source_->status().time;
  const Event* target = nullptr;
  if (direction > 0) {
    for (const Event& e : *overview_)
      if (e.time > from && timelineKindOf(e) == kind) {
        target = &e;
        break;
      }
  } else {
    // The latest earlier one: std::find_if backwards (clazy's clang cannot read views::reverse).
    const auto it = std::find_if(overview_->rbegin(), overview_->rend(),
                                 [&](const Event& e) { return e.time < from && timelineKindOf(e) == kind; });
    if (it != overview_->rend()) target = &*it;
  }
  if (!target) {
    time_->setText(tr("no %1 %2").arg(direction > 0 ? tr("later") : tr("earlier"), timelineKindLabel(kind).toLower()));
    return false;
  }
  pending_ = PendingSelection{kind, target->time};
  seek(std::max<SimTime>(0, target->time - kLeadIn));
  return true;
}

void ReplayControlsPanel::refresh(const TelemetryStore& store) {
  if (!source_) return;
  const SourceStatus st = source_->status();
  if (st.end > 0 && scrubber_->end() != st.end && overview_) setSource(source_);
  scrubber_->setPosition(st.time);
  // Only what applies: a served run of unknown length has no scrubber and no end, and jumps need
  // the recording's overview (a served replay does not send one).
  scrubber_->setVisible(st.end > 0);
  for (QWidget* w : std::initializer_list<QWidget*>{kind_, previous_, next_}) w->setVisible(overview_ != nullptr);
  if (source_->capabilities().seek)
    time_->setText(st.end > 0 ? QStringLiteral("%1 / %2").arg(formatSimTime(st.time), formatSimTime(st.end))
                              : formatSimTime(st.time));
  // The run's real pace (a served replay may run at a speed this console never chose).
  if (source_->capabilities().speed && st.speed != speed_->currentData().toDouble()) {
    const QSignalBlocker quiet(speed_);
    int i = speed_->findData(st.speed);
    if (i < 0) {
      speed_->addItem(st.speed > 0 ? QStringLiteral("%1x").arg(st.speed) : tr("max"), st.speed);
      i = speed_->count() - 1;
    }
    speed_->setCurrentIndex(i);
  }
  if (!pending_) return;
  // The aimed-at event once the replay has published it (its sequence number is the replay's).
  const auto [first, last] = store.discreteRange(pending_->time, pending_->time);
  for (std::size_t i = first; i < last; ++i) {
    const Event& e = store.discreteEvents()[i];
    if (timelineKindOf(e) != pending_->kind) continue;
    pending_.reset();
    view().selectEvent(e.seq, e.time);
    return;
  }
}

}  // namespace kvscope
