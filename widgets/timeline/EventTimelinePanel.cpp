#include "widgets/timeline/EventTimelinePanel.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "core/events/EventJson.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

namespace {

QIcon glyphIcon(TimelineKind kind, const QPalette& palette, qreal dpr) {
  QPixmap pixmap(QSize(16, 16) * dpr);
  pixmap.setDevicePixelRatio(dpr);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  paintTimelineGlyph(p, kind, QPointF(8, 8), 5.5, palette.color(QPalette::Text));
  return QIcon(pixmap);
}

// Every field of the event, one per line, as the recording and the JSONL export spell them.
QString fieldsOf(const Event& e) {
  QString out;
  const nlohmann::json j = eventToJson(e);
  for (const auto& [key, value] : j.items()) {
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    out += QStringLiteral("%1: %2\n").arg(QString::fromStdString(key), QString::fromStdString(text));
  }
  return out;
}

}  // namespace

EventTimelinePanel::EventTimelinePanel(ViewState& view, QWidget* parent) : TelemetryPanel(view, parent) {
  timeline_ = new EventTimelineView(view, this);

  live_ = new QToolButton(this);
  live_->setText(tr("Live"));
  live_->setCheckable(true);
  live_->setChecked(view.followLive());
  live_->setToolTip(tr("Follow the live edge. Zooming or panning the timeline stops following."));
  connect(live_, &QToolButton::toggled, this, [this](bool on) {
    this->view().setFollowLive(on);
    if (on && store_) this->view().advanceLive(store_->now());
  });
  connect(&view, &ViewState::followLiveChanged, live_, [this](bool on) {
    const QSignalBlocker block(live_);
    live_->setChecked(on);
  });

  auto* kinds = new QToolButton(this);
  kinds->setText(tr("Kinds"));
  kinds->setToolTip(tr("Choose which kinds of event the timeline shows"));
  kinds->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(kinds);
  for (int k = 0; k < kTimelineKinds; ++k) {
    const auto kind = static_cast<TimelineKind>(k);
    QAction* action = menu->addAction(glyphIcon(kind, palette(), devicePixelRatioF()), timelineKindLabel(kind));
    action->setObjectName(QStringLiteral("filter-%1").arg(QString::fromLatin1(timelineKindKey(kind))));
    action->setCheckable(true);
    action->setChecked(timeline_->kindVisible(kind));
    connect(action, &QAction::toggled, timeline_, [this, kind](bool on) { timeline_->setKindVisible(kind, on); });
    filters_[static_cast<std::size_t>(k)] = action;
  }
  menu->addSeparator();
  connect(menu->addAction(tr("Show all kinds")), &QAction::triggered, this, [this] {
    for (QAction* a : filters_) a->setChecked(true);
  });
  kinds->setMenu(menu);

  auto* hint = new QLabel(tr("Wheel zooms, drag pans, click selects"), this);
  hint->setForegroundRole(QPalette::PlaceholderText);

  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 2, 4, 2);
  bar->addWidget(live_);
  bar->addWidget(kinds);
  bar->addStretch(1);
  bar->addWidget(hint);

  // Many links make many rows: they scroll vertically, while time stays the wheel's.
  scroll_ = new QScrollArea(this);
  scroll_->setWidget(timeline_);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  details_ = new QPlainTextEdit(this);
  details_->setReadOnly(true);
  details_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  details_->setPlaceholderText(tr("Click an event to see every field of it"));
  details_->setMinimumHeight(details_->fontMetrics().lineSpacing() * 3);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(scroll_);
  split->addWidget(details_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setSizes({400, 60});  // the rows first; a few lines are enough to start reading an event
  split->setChildrenCollapsible(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  connect(timeline_, &EventTimelineView::eventClicked, this,
          [this](const Event& e) { this->view().selectEvent(e.seq, e.time); });
  connect(&view, &ViewState::eventSelected, this, &EventTimelinePanel::showDetails);
}

void EventTimelinePanel::refresh(const TelemetryStore& store) {
  store_ = &store;
  timeline_->setStore(store);
  // An event chosen before it reached the store (another panel ran ahead) gets its record now.
  if (details_pending_) showDetails(shown_seq_, shown_time_);
}

void EventTimelinePanel::showDetails(std::uint64_t seq, SimTime time) {
  shown_seq_ = seq;
  shown_time_ = time;
  details_pending_ = false;
  if (store_) {
    const auto [first, last] = store_->discreteRange(time, time);
    for (std::size_t i = first; i < last; ++i) {
      const Event& e = store_->discreteEvents()[i];
      if (e.seq != seq) continue;
      details_->setPlainText(describeTimelineEvent(e, store_) + QStringLiteral("\n\n") + fieldsOf(e));
      return;
    }
  }
  details_pending_ = store_ == nullptr || time >= store_->now();
  details_->setPlainText(tr("Event #%1 at %2 is not on the timeline (not a timeline kind, or older than the "
                            "events the console keeps)")
                             .arg(seq)
                             .arg(formatSimTime(time)));
}

QString EventTimelinePanel::detailsText() const { return details_->toPlainText(); }

}  // namespace kvscope
