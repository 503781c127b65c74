#include "widgets/timeline/EventTimelineView.h"

#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/telemetry/ColumnGrid.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

EventTimelineView::EventTimelineView(ViewState& view, QWidget* parent)
    : QWidget(parent), view_(view), axis_input_(view) {
  visible_.fill(true);
  setMouseTracking(true);  // the shared cursor follows the pointer, not only a drag
  measureText();
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setFocusPolicy(Qt::ClickFocus);
  connect(&view_, &ViewState::rangeChanged, this, [this] {
    invalidate();
    update();
  });
  connect(&view_, &ViewState::eventSelected, this, &EventTimelineView::onEventSelected);
  connect(&view_, &ViewState::workersHighlighted, this, [this] { update(); });
  connect(&view_, &ViewState::cursorChanged, this, [this] { update(); });
  connect(&view_, &ViewState::notesChanged, this, [this] { update(); });
}

void EventTimelineView::setStore(const TelemetryStore& store) {
  store_ = &store;
  if (groups_.setRows(store.timelineRows()) || groups_.names() != rows_) takeRows();
  invalidate();
  update();
}

bool EventTimelineView::toggleGroup(int row) {
  if (!groups_.toggle(row)) return false;
  takeRows();
  invalidate();
  update();
  return true;
}

void EventTimelineView::takeRows() {
  rows_ = groups_.names();
  group_starts_ = groups_.sectionStarts();
  measureText();
  updateGeometry();
}

void EventTimelineView::setKindVisible(TimelineKind kind, bool visible) {
  visible_[static_cast<std::size_t>(kind)] = visible;
  invalidate();
  update();
}

void EventTimelineView::invalidate() { layout_.valid = false; }

void EventTimelineView::measureText() {
  const QFontMetrics metrics = fontMetrics();
  int widest = metrics.horizontalAdvance(QStringLiteral("D00"));
  for (const std::string& name : rows_) widest = std::max(widest, metrics.horizontalAdvance(q(name)));
  label_width_ = widest + 16;
  axis_height_ = metrics.height() + 8;
  min_row_height_ = std::max(14, metrics.height() + 2);
}

int EventTimelineView::rowHeight() const {
  if (rows_.empty()) return minRowHeight();
  const int fit = (height() - axisHeight() - 2) / rowCount();
  return std::clamp(fit, minRowHeight(), 2 * minRowHeight() + 8);
}

QRect EventTimelineView::plotRect() const {
  const int left = labelWidth();
  return QRect(left, axisHeight(), std::max(0, width() - left - 8), rowCount() * rowHeight());
}

int EventTimelineView::xForTime(SimTime t) const {
  const QRect plot = plotRect();
  const double span = static_cast<double>(std::max<SimTime>(1, view_.to() - view_.from()));
  return plot.left() + static_cast<int>(std::floor(static_cast<double>(t - view_.from()) * plot.width() / span));
}

SimTime EventTimelineView::timeForX(double x) const {
  const QRect plot = plotRect();
  const double span = static_cast<double>(view_.to() - view_.from());
  return view_.from() + static_cast<SimTime>((x - plot.left()) * span / std::max(1, plot.width()));
}

int EventTimelineView::rowCenterY(int row) const { return axisHeight() + row * rowHeight() + rowHeight() / 2; }

int EventTimelineView::rowAt(int y) const {
  if (y < axisHeight()) return -1;
  const int row = (y - axisHeight()) / rowHeight();
  return row < rowCount() ? row : -1;
}

qreal EventTimelineView::glyphRadius(TimelineKind kind, std::int64_t magnitude) const {
  const qreal most = rowHeight() * 0.42;
  if (kind != TimelineKind::Eviction) return most * 0.8;
  // Area follows tokens freed, saturating at a 100K-token release (the storms free 30-90K).
  const double share = std::min(1.0, static_cast<double>(magnitude) / 100'000.0);
  return 2.0 + (most - 2.0) * std::sqrt(share);
}

void EventTimelineView::syncMarks() const {
  const auto& events = store_->discreteEvents();
  const std::uint64_t dropped = store_->droppedEvents();
  const std::uint64_t end = dropped + events.size();
  std::uint64_t cached_end = marks_first_ + marks_.size();
  // The store only appends and drops its oldest; anything else (a cleared store, another store)
  // shows as counts going back or the last classified event no longer being where it was.
  const bool continues =
      marks_store_ == store_ && dropped >= marks_first_ && end >= cached_end &&
      (marks_.empty() ? dropped == marks_first_
                      : cached_end > dropped && events[cached_end - 1 - dropped].seq == marks_last_seq_);
  if (!continues) {
    marks_.clear();
    marks_store_ = store_;
    marks_first_ = cached_end = dropped;
  }
  for (; marks_first_ < dropped; ++marks_first_) marks_.pop_front();
  for (std::uint64_t i = cached_end; i < end; ++i) {
    const Event& e = events[i - dropped];
    const auto kind = timelineKindOf(e);
    auto row16 = [](int row) { return static_cast<std::int16_t>(std::clamp(row, -1, static_cast<int>(INT16_MAX))); };
    marks_.push_back({e.time, static_cast<std::int32_t>(std::min<std::int64_t>(tokensFreedBy(e), INT32_MAX)),
                      row16(store_->rowOf(e)), row16(store_->prefillRowOf(e)),
                      static_cast<std::int8_t>(kind ? static_cast<int>(*kind) : -1)});
  }
  if (!events.empty()) marks_last_seq_ = events.back().seq;
}

void EventTimelineView::ensureLayout() const {
  if (layout_.valid && (!store_ || layout_.revision == store_->revision())) return;
  layout_ = Layout{};
  layout_.valid = true;
  if (!store_) return;
  layout_.revision = store_->revision();
  syncMarks();
  const QRect plot = plotRect();
  const int rows = rowCount();
  if (plot.width() <= 0 || rows == 0) return;

  const SimTime from = view_.from(), to = view_.to();
  const ColumnGrid grid{from, to, plot.width()};  // the charts' columns: a glyph sits over its chart column
  const int bins = (plot.width() + kBinPx - 1) / kBinPx;
  const auto lo =
      std::lower_bound(marks_.begin(), marks_.end(), from, [](const Mark& m, SimTime t) { return m.time < t; });
  const auto hi = std::upper_bound(lo, marks_.end(), to, [](SimTime t, const Mark& m) { return t < m.time; });
  const auto first = static_cast<std::size_t>(lo - marks_.begin()),
             last = static_cast<std::size_t>(hi - marks_.begin());
  FrameStats& stats = layout_.stats;
  stats.events_in_range = static_cast<long>(last - first);
  // Events arrive time-sorted, so each row only ever extends its latest cell or opens the next.
  std::vector<int> open(static_cast<std::size_t>(rows), -1);
  ColumnCursor columns(grid);
  // The loop below runs once per event in view (200,000 once the ring is full): no call per event.
  std::array<int, kTimelineKinds> severity{};
  for (int k = 0; k < kTimelineKinds; ++k)
    severity[static_cast<std::size_t>(k)] = timelineKindSeverity(static_cast<TimelineKind>(k));
  int open_line = -1;
  auto it = lo;
  for (std::size_t i = first; i < last; ++i, ++it) {
    const Mark& m = *it;
    if (m.kind < 0) continue;
    const auto k = static_cast<std::size_t>(static_cast<unsigned char>(m.kind));  // the kind's index, >= 0 here
    if (!visible_[k]) continue;
    const auto kind = static_cast<TimelineKind>(m.kind);
    ++stats.events_shown;
    ++stats.shown_by_kind[k];
    const int column = columns.columnOf(m.time);
    if (m.row < 0) {
      if (open_line >= 0 && layout_.lines[static_cast<std::size_t>(open_line)].x == column) {
        Line& l = layout_.lines[static_cast<std::size_t>(open_line)];
        ++l.count;
        l.last = i;
        if (severity[k] > severity[static_cast<std::size_t>(l.kind)]) l.kind = kind, l.representative = i;
      } else {
        layout_.lines.push_back({column, 1, kind, i, i, i});
        open_line = static_cast<int>(layout_.lines.size()) - 1;
      }
      continue;
    }
    const int bin = std::min(column / kBinPx, bins - 1);
    // Store rows to shown rows: a folded group's members all land on the group's row (once).
    const int main_row = groups_.displayOf(m.row), other_row = groups_.displayOf(m.also_row);
    for (const int row : {main_row, other_row == main_row ? -1 : other_row}) {
      if (row < 0 || row >= rows) continue;  // none, or a row the last setStore() did not know yet
      int& slot = open[static_cast<std::size_t>(row)];
      if (slot >= 0 && layout_.cells[static_cast<std::size_t>(slot)].bin == bin) {
        Cell& c = layout_.cells[static_cast<std::size_t>(slot)];
        ++c.count;
        c.last = i;
        const int rank = severity[k];
        if (rank > c.severity || (kind == c.kind && m.tokens_freed > c.magnitude))
          c.kind = kind, c.representative = i, c.magnitude = m.tokens_freed, c.time = m.time, c.severity = rank;
      } else {
        layout_.cells.push_back({row, bin, 1, kind, i, i, i, m.tokens_freed, m.time, severity[k]});
        slot = static_cast<int>(layout_.cells.size()) - 1;
      }
    }
  }
}

std::vector<EventTimelineView::DrawnGlyph> EventTimelineView::drawnGlyphs() const {
  ensureLayout();
  std::vector<DrawnGlyph> out;
  out.reserve(layout_.cells.size());
  for (const Cell& c : layout_.cells) out.push_back({c.row, c.bin, c.count, c.kind});
  return out;
}

QPointF EventTimelineView::glyphCentre(const Cell& c, const QRect& plot) const {
  const double span = static_cast<double>(std::max<SimTime>(1, view_.to() - view_.from()));
  return {plot.left() + static_cast<double>(c.time - view_.from()) * plot.width() / span,
          static_cast<double>(rowCenterY(c.row))};
}

std::optional<EventTimelineView::Hit> EventTimelineView::hitItem(QPoint pos) const {
  ensureLayout();
  const QRect plot = plotRect();
  if (!store_ || !plot.adjusted(-4, 0, 4, 0).contains(pos)) return std::nullopt;
  std::optional<Hit> best;
  double best_dx = std::numeric_limits<double>::max();
  if (const int row = rowAt(pos.y()); row >= 0) {
    for (std::size_t i = 0; i < layout_.cells.size(); ++i) {
      const Cell& c = layout_.cells[i];
      if (c.row != row) continue;
      const double dx = std::abs(glyphCentre(c, plot).x() - pos.x());
      if (dx <= std::max<qreal>(glyphRadius(c.kind, c.magnitude), kBinPx) + 2 && dx < best_dx)
        best = Hit{false, i}, best_dx = dx;
    }
  }
  if (best) return best;
  for (std::size_t i = 0; i < layout_.lines.size(); ++i) {
    const double dx = std::abs(plot.left() + layout_.lines[i].x - pos.x());
    if (dx <= 3 && dx < best_dx) best = Hit{true, i}, best_dx = dx;
  }
  return best;
}

std::optional<Event> EventTimelineView::hitTest(QPoint pos) const {
  const auto hit = hitItem(pos);
  if (!hit) return std::nullopt;
  const std::size_t index =
      hit->line ? layout_.lines[hit->item].representative : layout_.cells[hit->item].representative;
  return store_->discreteEvents()[index];
}

QString EventTimelineView::aggregateSummary(int row, std::size_t first, std::size_t last) const {
  std::array<long, kTimelineKinds> counts{};
  long total = 0;
  std::int64_t freed = 0;
  const auto& events = store_->discreteEvents();
  for (std::size_t i = first; i <= last && i < events.size(); ++i) {
    const auto kind = timelineKindOf(events[i]);
    if (!kind || !kindVisible(*kind) ||
        (groups_.displayOf(store_->rowOf(events[i])) != row &&
         groups_.displayOf(store_->prefillRowOf(events[i])) != row))
      continue;
    ++counts[static_cast<std::size_t>(*kind)];
    ++total;
    freed += tokensFreedBy(events[i]);
  }
  QString text = tr("%1 events here (zoom in to tell them apart):").arg(total);
  for (int k = 0; k < kTimelineKinds; ++k) {
    if (!counts[static_cast<std::size_t>(k)]) continue;
    text += QStringLiteral("\n  %1  %2")
                .arg(counts[static_cast<std::size_t>(k)])
                .arg(timelineKindLabel(static_cast<TimelineKind>(k)));
    if (static_cast<TimelineKind>(k) == TimelineKind::Eviction)
      text += tr(", %1 tokens freed in all").arg(QLocale().toString(static_cast<qlonglong>(freed)));
  }
  return text;
}

QString EventTimelineView::toolTipAt(QPoint pos) const {
  const auto hit = hitItem(pos);
  if (!hit) return {};
  const auto& events = store_->discreteEvents();
  if (hit->line) {
    const Line& l = layout_.lines[hit->item];
    const QString one = describeTimelineEvent(events[l.representative], store_);
    return l.count == 1 ? one : aggregateSummary(-1, l.first, l.last) + tr("\n\nMost notable:\n") + one;
  }
  const Cell& c = layout_.cells[hit->item];
  const QString one = describeTimelineEvent(events[c.representative], store_);
  return c.count == 1 ? one : aggregateSummary(c.row, c.first, c.last) + tr("\n\nMost severe:\n") + one;
}

std::optional<std::size_t> EventTimelineView::indexOfSeq(std::uint64_t seq, SimTime time) const {
  if (!store_ || seq == 0) return std::nullopt;
  const auto [first, last] = store_->discreteRange(time, time);
  for (std::size_t i = first; i < last; ++i)
    if (store_->discreteEvents()[i].seq == seq) return i;
  return std::nullopt;
}

void EventTimelineView::onEventSelected(std::uint64_t seq, SimTime time) {
  highlighted_seq_ = seq;
  highlighted_time_ = time;
  // Another panel (replay's "next crash", the inspector) may pick an event we do not show yet.
  const SimTime from = view_.from(), to = view_.to();
  if (time < from || time > to) view_.goToTime(time);
  update();
}

void EventTimelineView::paintRows(QPainter& p, const QRect& plot) const {
  const QPalette& pal = palette();
  const int h = rowHeight();
  for (int r = 0; r < rowCount(); ++r) {
    const QRect band(0, plot.top() + r * h, width(), h);
    if (r % 2) p.fillRect(band, pal.color(QPalette::AlternateBase));
    const QString name = q(rows_[static_cast<std::size_t>(r)]);
    const bool marked = view_.isHighlighted(name.trimmed());  // a selected finding's worker or link
    if (marked) {
      QColor tint = pal.color(QPalette::Highlight);
      tint.setAlpha(45);
      p.fillRect(band, tint);
    }
    QFont font = p.font();
    font.setBold(marked);
    p.setFont(font);
    p.setPen(pal.color(QPalette::Text));
    const QRect label = band.adjusted(6, 0, -(width() - plot.left()) - 4, 0);
    StaticTextCache& cache = marked ? bold_text_ : text_;
    const QString shown = cache.width(name, font) <= label.width()
                              ? name
                              : QFontMetrics(font).elidedText(name, Qt::ElideRight, label.width());
    const QStaticText& text = cache.get(shown, font);
    p.drawStaticText(QPointF(label.left(), label.top() + (label.height() - text.size().height()) / 2), text);
  }
  QFont plain = p.font();
  plain.setBold(false);
  p.setFont(plain);
  p.setPen(pal.color(QPalette::Mid));
  for (int start : group_starts_) p.drawLine(0, plot.top() + start * h, width(), plot.top() + start * h);
  p.drawLine(plot.left() - 1, plot.top(), plot.left() - 1, plot.bottom());
}

void EventTimelineView::paintAxis(QPainter& p, const QRect& plot) const {
  const QPalette& pal = palette();
  const double span_s = timeToSeconds(view_.to() - view_.from());
  // A 1-2-5 step giving a label about every 100 pixels.
  const double raw = span_s * 100.0 / std::max(1, plot.width());
  const double decade = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-6))));
  double step = decade;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (decade * m >= raw) {
      step = decade * m;
      break;
    }
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step))));
  QColor grid = pal.color(QPalette::Mid);
  grid.setAlpha(70);
  const double first = std::ceil(timeToSeconds(view_.from()) / step) * step;
  for (double t = first; t <= timeToSeconds(view_.to()) + 1e-9; t += step) {
    const int x = xForTime(secondsToTime(t));
    p.setPen(grid);
    p.drawLine(x, plot.top(), x, plot.bottom());
    p.setPen(pal.color(QPalette::Text));
    p.drawLine(x, plot.top() - 4, x, plot.top());
    const QStaticText& label = text_.get(QStringLiteral("%1 s").arg(t, 0, 'f', decimals), p.font());
    const double w = label.size().width();
    if (x - w / 2 >= plot.left() - 8 && x + w / 2 <= width())
      p.drawStaticText(QPointF(x - w / 2, (axisHeight() - 4 - label.size().height()) / 2), label);
  }
  p.setPen(pal.color(QPalette::Mid));
  p.drawLine(0, plot.top() - 1, width(), plot.top() - 1);
}

void EventTimelineView::paintHighlight(QPainter& p, const QRect& plot) const {
  const auto index = indexOfSeq(highlighted_seq_, highlighted_time_);
  if (!index) return;
  const Event& e = store_->discreteEvents()[*index];
  const auto kind = timelineKindOf(e);
  if (!kind || e.time < view_.from() || e.time > view_.to()) return;
  const int row = groups_.displayOf(store_->rowOf(e));
  const QColor ring = palette().color(QPalette::Highlight);
  const int x = xForTime(e.time);
  if (row < 0 || row >= rowCount()) {
    p.setPen(QPen(ring, 3));
    p.drawLine(x, plot.top(), x, plot.bottom());
    return;
  }
  // Drawn on top of its cell, so a selected event stays visible even where a more severe one won.
  const QPointF c(x, rowCenterY(row));
  paintTimelineGlyph(p, *kind, c, glyphRadius(*kind, tokensFreedBy(e)), palette().color(QPalette::Text));
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(ring, 2));
  p.setBrush(Qt::NoBrush);
  const qreal r = rowHeight() * 0.5 + 1;
  p.drawEllipse(c, r, r);
}

const QPixmap& EventTimelineView::sprite(TimelineKind kind, qreal radius) const {
  const int halves = qRound(radius * 2);
  const int key = static_cast<int>(kind) << 16 | halves;
  auto it = sprites_.find(key);
  if (it != sprites_.end() && it->devicePixelRatio() == devicePixelRatioF()) return *it;
  const qreal r = halves / 2.0;
  const int side = static_cast<int>(std::ceil(2 * r)) + 8;  // room for the outline and the crash's stroke
  QPixmap glyph(QSize(side, side) * devicePixelRatioF());
  glyph.setDevicePixelRatio(devicePixelRatioF());
  glyph.fill(Qt::transparent);
  QPainter p(&glyph);
  QColor outline = palette().color(QPalette::Text);
  outline.setAlpha(150);
  paintTimelineGlyph(p, kind, QPointF(side / 2.0, side / 2.0), r, outline);
  return *sprites_.insert(key, glyph);
}

void EventTimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QPalette& pal = palette();
  p.fillRect(rect(), pal.color(QPalette::Base));
  ensureLayout();
  last_frame_ = layout_.stats;
  if (rows_.empty()) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("No run yet: workers, prefill and links appear when it starts"));
    return;
  }
  const QRect plot = plotRect();
  paintRows(p, plot);
  paintAxis(p, plot);

  p.save();
  p.setClipRect(plot);
  const int h = rowHeight();
  // A crowded cell is tinted by how many events it folds, so density survives the aggregation.
  for (const Cell& c : layout_.cells) {
    if (c.count < 2) continue;
    QColor tint = timelineKindColor(c.kind);
    tint.setAlpha(std::clamp(static_cast<int>(40 + 30 * std::log2(static_cast<double>(c.count))), 40, 170));
    p.fillRect(QRect(plot.left() + c.bin * kBinPx, plot.top() + c.row * h + 1, kBinPx, h - 2), tint);
  }
  for (const Cell& c : layout_.cells) {
    const QPixmap& glyph = sprite(c.kind, glyphRadius(c.kind, c.magnitude));
    const QPointF centre = glyphCentre(c, plot);
    const qreal half = glyph.width() / glyph.devicePixelRatio() / 2;
    p.drawPixmap(QPoint(qRound(centre.x() - half), qRound(centre.y() - half)), glyph);
    ++last_frame_.glyphs;
  }
  for (const Line& l : layout_.lines) {
    const bool knob = l.kind == TimelineKind::KnobChange;
    p.setPen(QPen(timelineKindColor(l.kind), l.count > 1 ? 3 : 2, knob ? Qt::DashLine : Qt::SolidLine));
    p.drawLine(plot.left() + l.x, plot.top(), plot.left() + l.x, plot.bottom());
    ++last_frame_.lines;
  }
  if (const SimTime now = store_->now(); now >= view_.from() && now <= view_.to()) {
    QColor live = pal.color(QPalette::Highlight);
    live.setAlpha(140);
    p.setPen(QPen(live, 1, Qt::DotLine));
    p.drawLine(xForTime(now), plot.top(), xForTime(now), plot.bottom());
  }
  paintHighlight(p, plot);
  paintCursor(p, plot);
  p.restore();
  paintNotes(p, plot);

  // Flags in the axis band name the line kind where rows would hide it.
  for (const Line& l : layout_.lines) {
    const QPointF top(plot.left() + l.x, plot.top() - 1);
    p.setPen(Qt::NoPen);
    p.setBrush(timelineKindColor(l.kind));
    p.drawPolygon(QPolygonF(QList<QPointF>{top, top + QPointF(-4, -6), top + QPointF(4, -6)}));
  }
  if (last_frame_.events_shown == 0) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(plot, Qt::AlignCenter,
               last_frame_.events_in_range ? tr("Every event in this range is filtered out")
                                           : tr("No evictions, seeds, crashes or link changes in this range"));
  }
}

void EventTimelineView::resizeEvent(QResizeEvent* e) {
  invalidate();
  QWidget::resizeEvent(e);
}

void EventTimelineView::changeEvent(QEvent* e) {
  if (e->type() == QEvent::FontChange || e->type() == QEvent::StyleChange) {
    measureText();
    invalidate();
    updateGeometry();
  }
  if (e->type() == QEvent::PaletteChange || e->type() == QEvent::FontChange || e->type() == QEvent::StyleChange) {
    sprites_.clear();  // their outline follows the palette's text colour
    update();
  }
  QWidget::changeEvent(e);
}

bool EventTimelineView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString text = toolTipAt(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
      e->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(e);
}

// The operator's notes: a dashed line across the rows and a square flag in the axis band, the note's
// text in the tooltip of the Notes panel and on the charts' markers.
void EventTimelineView::paintNotes(QPainter& p, const QRect& plot) {
  const QColor colour(0xd9, 0x5f, 0x02);
  for (const RunNote& n : view_.notes()) {
    if (n.time < view_.from() || n.time > view_.to()) continue;
    const int x = xForTime(n.time);
    p.setPen(QPen(colour, 1, Qt::DashLine));
    p.drawLine(x, plot.top(), x, plot.bottom());
    p.fillRect(QRect(x - 3, plot.top() - 7, 6, 6), colour);
    ++last_frame_.notes;
  }
}

void EventTimelineView::paintCursor(QPainter& p, const QRect& plot) const {
  const std::optional<SimTime> t = view_.cursorTime();
  if (!t || *t < view_.from() || *t > view_.to()) return;
  QColor c = palette().color(QPalette::Text);
  c.setAlpha(110);
  p.setPen(QPen(c, 1));
  p.drawLine(xForTime(*t), plot.top(), xForTime(*t), plot.bottom());
}

void EventTimelineView::wheelEvent(QWheelEvent* e) {
  if (plotRect().width() <= 0) return;
  axis_input_.wheel(e, timeForX(e->position().x()));
}

void EventTimelineView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
  axis_input_.press(e->position().toPoint());
}

void EventTimelineView::mouseMoveEvent(QMouseEvent* e) {
  const QPoint pos = e->position().toPoint();
  const QRect plot = plotRect();
  axis_input_.hover(plot.contains(pos) ? std::optional(timeForX(pos.x())) : std::nullopt);
  if (!axis_input_.pressed()) return QWidget::mouseMoveEvent(e);
  const bool was_dragging = axis_input_.dragging();
  if (axis_input_.drag(pos, plot.width()) && !was_dragging) setCursor(Qt::ClosedHandCursor);
}

void EventTimelineView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton || !axis_input_.pressed()) return QWidget::mouseReleaseEvent(e);
  const bool click = axis_input_.release();
  unsetCursor();
  if (!click) return;
  const QPoint pos = e->position().toPoint();
  if (pos.x() < plotRect().left() && toggleGroup(rowAt(pos.y()))) return;  // a group's label
  if (const auto hit = hitTest(pos)) emit eventClicked(*hit);
}

// Double-click returns to the live edge, as on the charts.
void EventTimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && plotRect().contains(e->position().toPoint())) axis_input_.doubleClick();
}

void EventTimelineView::leaveEvent(QEvent* e) {
  axis_input_.hover(std::nullopt);
  QWidget::leaveEvent(e);
}

QSize EventTimelineView::sizeHint() const {
  return {900, axisHeight() + std::max(4, rowCount()) * (minRowHeight() + 6)};
}

QSize EventTimelineView::minimumSizeHint() const {
  return {labelWidth() + 120, axisHeight() + std::max(1, rowCount()) * minRowHeight() + 2};
}

}  // namespace kvscope
