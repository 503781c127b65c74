#include "widgets/charts/TimeSeriesChart.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "widgets/charts/AxisTicks.h"
#include "widgets/charts/ChartExport.h"
#include "widgets/common/PaletteTint.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

namespace {
constexpr int kGrabPixels = 5;          // how near a draggable line a press grabs it
constexpr int kMarkerMergePixels = 40;  // markers closer than this share one label
}  // namespace

TimeSeriesChart::TimeSeriesChart(ViewState& view, const QString& title, QWidget* parent)
    : QWidget(parent), view_(view), title_(title), axis_input_(view) {
  setMinimumSize(240, 90);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  connect(&view_, &ViewState::rangeChanged, this, [this] { update(); });
  connect(&view_, &ViewState::workersHighlighted, this, [this] { update(); });
  connect(&view_, &ViewState::cursorChanged, this, [this] { update(); });
}

int TimeSeriesChart::addSeries(const QString& name, const QColor& color, Style style, const QString& owner) {
  series_.push_back({name, color, style, owner, {}, 0});
  return static_cast<int>(series_.size()) - 1;
}

void TimeSeriesChart::clearSeries() {
  series_.clear();
  update();
}

// Cached: yOf() runs twice per column per series on every paint, and the left margin depends on
// the y labels' widths (text measuring). Invalidated by a resize, a font change or a new y range.
QRect TimeSeriesChart::plotRect() const {
  const auto key = std::tuple(size(), y_min_, y_max_, font_generation_);
  if (plot_cache_key_ == key) return plot_cache_;
  plot_cache_ = computePlotRect();
  plot_cache_key_ = key;
  return plot_cache_;
}

QRect TimeSeriesChart::computePlotRect() const {
  const QFontMetrics fm = fontMetrics();
  const int top = fm.height() + kPad;
  const int bottom = 2 * fm.height() + kPad;
  const int left = leftMargin();
  return QRect(left, top, std::max(16, width() - left - kPad), std::max(16, height() - top - bottom));
}

int TimeSeriesChart::leftMargin() const {
  const QFontMetrics fm = fontMetrics();
  int widest = fm.horizontalAdvance(QStringLiteral("0000"));
  const int plot_height = height() - 3 * fm.height() - 2 * kPad;
  for (const AxisTicks::Tick& t : yTicks(plot_height).ticks) widest = std::max(widest, fm.horizontalAdvance(t.label));
  return widest + 2 * kPad;
}

ColumnGrid TimeSeriesChart::grid() const { return {view_.from(), view_.to(), plotColumns()}; }

int TimeSeriesChart::yOf(double value) const {
  const QRect plot = plotRect();
  const double span = y_max_ > y_min_ ? y_max_ - y_min_ : 1;
  const double frac = std::clamp((value - y_min_) / span, 0.0, 1.0);
  return plot.bottom() - static_cast<int>(std::lround(frac * (plot.height() - 1)));
}

double TimeSeriesChart::valueAtY(int y) const {
  const QRect plot = plotRect();
  const double frac = static_cast<double>(plot.bottom() - y) / std::max(1, plot.height() - 1);
  return y_min_ + frac * (y_max_ - y_min_);
}

std::vector<EnvelopeColumn> TimeSeriesChart::envelopeOf(const MinMaxSeries& data, double scale) const {
  EnvelopeOptions options;
  options.hold_until = hold_until_;
  std::vector<EnvelopeColumn> columns = data.envelope(grid(), options);
  for (EnvelopeColumn& c : columns) {
    c.lo *= scale;
    c.hi *= scale;
  }
  return columns;
}

void TimeSeriesChart::setBand(const QString& legend, std::vector<BandColumn> band, const QColor& color) {
  band_legend_ = legend;
  band_ = std::move(band);
  band_color_ = color;
  if (!fixed_y_) fitY();
  update();
}

void TimeSeriesChart::clearBand() {
  if (band_.empty() && band_legend_.isEmpty()) return;
  band_.clear();
  band_legend_.clear();
  if (!fixed_y_) fitY();
  update();
}

void TimeSeriesChart::setSeriesData(int index, const MinMaxSeries& data, double scale) {
  Series& s = series_[static_cast<std::size_t>(index)];
  EnvelopeOptions options;
  options.hold = !isPoints(s.style);
  options.hold_until = hold_until_;
  assignColumns(s, data.envelope(grid(), options), scale);
}

void TimeSeriesChart::setComparedData(int index, const MinMaxSeries& data, double scale, SimTime shift,
                                      SimTime hold_until) {
  Series& s = series_[static_cast<std::size_t>(index)];
  EnvelopeOptions options;
  options.hold = !isPoints(s.style);
  options.hold_until = hold_until;
  const ColumnGrid g = grid();
  assignColumns(s, data.envelope({g.from - shift, g.to - shift, g.columns}, options), scale);
}

void TimeSeriesChart::setSeriesColumns(int index, std::vector<EnvelopeColumn> columns) {
  assignColumns(series_[static_cast<std::size_t>(index)], std::move(columns), 1.0);
}

void TimeSeriesChart::assignColumns(Series& s, std::vector<EnvelopeColumn> columns, double scale) {
  s.columns = std::move(columns);
  s.max = 0;
  s.min = 0;
  for (EnvelopeColumn& c : s.columns) {
    if (!c.present) continue;
    c.lo *= scale;
    c.hi *= scale;
    s.max = std::max(s.max, c.hi);
    s.min = std::min(s.min, c.lo);
  }
  if (!fixed_y_) fitY();
  update();
}

void TimeSeriesChart::clearSeriesData(int index) {
  Series& s = series_[static_cast<std::size_t>(index)];
  s.columns.clear();
  s.max = 0;
  s.min = 0;
  update();
}

void TimeSeriesChart::setThreshold(const QString& label, double value, const QColor& color) {
  auto it = std::find_if(thresholds_.begin(), thresholds_.end(), [&](const Threshold& t) { return t.label == label; });
  if (it == thresholds_.end()) {
    thresholds_.push_back({label, value, color});
  } else {
    if (drag_ == Drag::Threshold && drag_label_ == label) return;  // the user holds it
    it->value = value;
    it->color = color;
  }
  if (!fixed_y_) fitY();
  update();
}

void TimeSeriesChart::setDraggableThreshold(const QString& label, double drag_min, double drag_max) {
  for (Threshold& t : thresholds_)
    if (t.label == label) {
      t.draggable = drag_max > drag_min;
      t.drag_min = drag_min;
      t.drag_max = drag_max;
    }
}

std::optional<double> TimeSeriesChart::threshold(const QString& label) const {
  for (const Threshold& t : thresholds_)
    if (t.label == label) return t.value;
  return std::nullopt;
}

void TimeSeriesChart::setMarkers(std::vector<Marker> markers) {
  markers_ = std::move(markers);
  update();
}

std::vector<TimeSeriesChart::Marker> TimeSeriesChart::drawnMarkers() const {
  std::vector<Marker> out;
  const ColumnGrid g = grid();
  int last_column = -kMarkerMergePixels - 1;
  for (const Marker& m : markers_) {
    if (m.time < view_.from() || m.time > view_.to()) continue;
    const int column = g.columnOf(m.time);
    if (!out.empty() && column - last_column < kMarkerMergePixels) {
      out.back().label += QStringLiteral(", ") + m.label;
      continue;
    }
    out.push_back(m);
    last_column = column;
  }
  return out;
}

void TimeSeriesChart::setHighlight(SimTime from, SimTime to) {
  highlight_from_ = from;
  highlight_to_ = to;
  update();
}

void TimeSeriesChart::setFixedYRange(double min, double max) {
  fixed_y_ = true;
  y_min_ = min;
  y_max_ = max;
}

// The axis top moves only to tidy values, so it changes rarely while a run plays.
void TimeSeriesChart::fitY() {
  double hi = 0;
  for (const Series& s : series_) hi = std::max({hi, s.max, signed_y_ ? -s.min : 0.0});
  for (const Threshold& t : thresholds_) hi = std::max(hi, t.value);
  for (const BandColumn& b : band_)
    if (b.present) hi = std::max(hi, b.hi);
  double top = AxisTicks::niceTop(hi * 1.05);
  if (integer_) top = std::max(top, 5.0);
  y_min_ = signed_y_ ? -top : 0;
  y_max_ = top;
  // The y labels set the left margin, hence the plot's width: columns computed for another width
  // would be drawn off by a pixel or two until the panel refreshes again, which it is told to.
  const auto columns = static_cast<std::size_t>(grid().columns);
  bool stale = !band_.empty() && band_.size() != columns;
  for (const Series& s : series_) stale = stale || (!s.columns.empty() && s.columns.size() != columns);
  if (stale) emit columnsStale();
}

// About one tick per 40 px; whole numbers only for counts.
AxisTicks TimeSeriesChart::yTicks(int plot_height) const {
  AxisTicks ticks = AxisTicks::make(y_min_, y_max_, std::max(2, plot_height / 40));
  if (integer_ && ticks.step < 1)
    ticks = AxisTicks::make(y_min_, y_max_, static_cast<int>(std::max(1.0, y_max_ - y_min_)));
  return ticks;
}

QString TimeSeriesChart::tickLabelsY() const {
  QStringList labels;
  const AxisTicks ticks = yTicks(plotRect().height());
  for (const AxisTicks::Tick& tick : ticks.ticks) labels.prepend(tick.label);  // top to bottom
  return labels.join('|');
}

void TimeSeriesChart::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  update();  // the panel's next refresh recomputes the columns for the new width
}

void TimeSeriesChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QPalette& pal = palette();
  p.fillRect(rect(), pal.color(QPalette::Base));
  const QRect plot = plotRect();
  paintAxes(p, plot);
  p.save();
  p.setClipRect(plot);
  if (highlight_to_ > highlight_from_) {
    QColor fill = pal.color(QPalette::Highlight);
    fill.setAlpha(50);
    const ColumnGrid g = grid();
    const int x0 = plot.left() + g.columnOf(std::max(highlight_from_, view_.from()));
    const int x1 = plot.left() + g.columnOf(std::min(highlight_to_, view_.to()));
    if (highlight_to_ >= view_.from() && highlight_from_ <= view_.to())
      p.fillRect(QRect(x0, plot.top(), x1 - x0 + 1, plot.height()), fill);
  }
  paintNowLine(p, plot);
  paintBand(p, plot);
  // Ghosts (a preview's futures) under the real series; each column one filled run of pixels. A
  // compared run's gauge is dashed: runs of kDash columns drawn, kDash left out.
  constexpr int kDash = 4;
  for (const Style pass : {Style::Ghost, Style::Gauge}) {
    for (const Series& s : series_) {
      if (isGhost(s.style) != (pass == Style::Ghost) || hiddenSeries(s)) continue;
      QColor color = s.color;
      color.setAlpha(seriesAlpha(s));
      // Faint points, mixed into the background rather than blended: a translucent fill of a column
      // taller than ~96 px is handed to Qt's thread pool span by span (2-3 ms a chart per frame).
      if (s.style == Style::ComparedPoints) color = mixHue(pal.color(QPalette::Base), color, color.alphaF());
      const bool dashed = s.style == Style::Compared;
      const int n = std::min(static_cast<int>(s.columns.size()), plot.width());
      for (int c = 0; c < n; ++c) {
        const EnvelopeColumn& col = s.columns[static_cast<std::size_t>(c)];
        if (!col.present || (dashed && (c / kDash) % 2 == 1)) continue;
        const int top = yOf(col.hi), bottom = yOf(col.lo);
        p.fillRect(QRect(plot.left() + c, top, 1, bottom - top + 1), color);
      }
    }
  }
  paintOverlays(p, plot);
  paintCursor(p, plot);
  paintBox(p, plot);
  p.restore();
  p.setPen(pal.color(QPalette::Mid));
  p.drawRect(plot.adjusted(-1, -1, 0, 0));
  paintLegend(p);
}

// A light fill from min to max and a darker pixel at the median, column by column: the same
// per-column runs as the series, so a one-column spike of any worker shows at the band's edge.
void TimeSeriesChart::paintBand(QPainter& p, const QRect& plot) {
  if (band_.empty()) return;
  QColor fill = band_color_;
  fill.setAlpha(55);
  QColor median = band_color_;
  median.setAlpha(200);
  const int n = std::min(static_cast<int>(band_.size()), plot.width());
  for (int c = 0; c < n; ++c) {
    const BandColumn& b = band_[static_cast<std::size_t>(c)];
    if (!b.present) continue;
    const int top = yOf(b.hi), bottom = yOf(b.lo);
    p.fillRect(QRect(plot.left() + c, top, 1, bottom - top + 1), fill);
    const int y = yOf(b.median);
    p.fillRect(QRect(plot.left() + c, y - 1, 1, 2), median);
  }
}

void TimeSeriesChart::paintAxes(QPainter& p, const QRect& plot) {
  const QPalette& pal = palette();
  const QFontMetrics fm = fontMetrics();
  QColor grid_color = pal.color(QPalette::Mid);
  grid_color.setAlpha(90);
  for (const AxisTicks::Tick& t : yTicks(plot.height()).ticks) {
    const int y = yOf(t.value);
    // Grid lines as 1-pixel fills: the same pixels as a cosmetic drawLine, without the raster
    // engine's line path (QRasterPaintEngine::drawLines stood out in the 64-D paint profile).
    p.fillRect(QRect(plot.left(), y, plot.width(), 1), grid_color);
    p.setPen(pal.color(QPalette::Text));
    const QStaticText& label = text_.get(t.label, font());
    p.drawStaticText(QPointF(plot.left() - kPad - label.size().width(), y - label.size().height() / 2), label);
  }
  const double from_s = timeToSeconds(view_.from()), to_s = timeToSeconds(view_.to());
  const int target =
      std::max(2, plot.width() / std::max(60, fm.horizontalAdvance(QStringLiteral("00000.0")) + 2 * kPad));
  const ColumnGrid g = grid();
  for (const AxisTicks::Tick& t : AxisTicks::make(from_s, to_s, target).ticks) {
    const int x = plot.left() + g.columnOf(secondsToTime(t.value));
    p.fillRect(QRect(x, plot.top(), 1, plot.height()), grid_color);
    p.setPen(pal.color(QPalette::Text));
    // Centred under its tick, but kept inside the widget (the last tick sits at the right edge).
    const QStaticText& label = text_.get(t.label, font());
    const int w = static_cast<int>(std::ceil(label.size().width()));
    const int left = std::clamp(x - w / 2, 0, std::max(0, width() - w - 1));
    p.drawStaticText(QPointF(left, plot.bottom() + 2), label);
  }
  const QStaticText& axis = text_.get(tr("run time (s)"), font());
  p.drawStaticText(QPointF(plot.left() + (plot.width() - axis.size().width()) / 2, plot.bottom() + 2 + fm.height()),
                   axis);
}

// "Now" where the view shows time after it (a preview's forecast, a look ahead): left of the line
// happened, right of it is forecast. Under the data, so it never covers a sample's pixel.
void TimeSeriesChart::paintNowLine(QPainter& p, const QRect& plot) {
  const ColumnGrid g = grid();
  if (hold_until_ <= view_.from() || g.columnOf(hold_until_) >= g.columns - 2) return;
  const int x = plot.left() + g.columnOf(hold_until_);
  p.fillRect(QRect(x, plot.top(), 2, plot.height()), palette().color(QPalette::Text));
  p.setPen(palette().color(QPalette::Text));
  const QString now = tr("now");
  p.drawText(QPoint(x - fontMetrics().horizontalAdvance(now) - 3, plot.bottom() - 3), now);
}

void TimeSeriesChart::paintBox(QPainter& p, const QRect& plot) {
  if (drag_ != Drag::Box) return;
  QColor fill = palette().color(QPalette::Highlight);
  fill.setAlpha(60);
  const int left = std::min(box_from_x_, box_to_x_), right = std::max(box_from_x_, box_to_x_);
  p.fillRect(QRect(left, plot.top(), right - left, plot.height()), fill);
}

void TimeSeriesChart::paintOverlays(QPainter& p, const QRect& plot) {
  const QFontMetrics fm = fontMetrics();
  for (const Threshold& t : thresholds_) {
    const int y = yOf(t.value);
    p.setPen(QPen(t.color, 1, Qt::DashLine));
    p.drawLine(plot.left(), y, plot.right(), y);
    if (!t.draggable) continue;
    // A grip at the right end says "drag me"; while dragged, the value it would set.
    QPolygon grip;
    grip << QPoint(plot.right(), y - 5) << QPoint(plot.right() - 8, y) << QPoint(plot.right(), y + 5);
    p.setBrush(t.color);
    p.setPen(t.color);
    p.drawPolygon(grip);
    p.setBrush(Qt::NoBrush);
    if (drag_ == Drag::Threshold && drag_label_ == t.label) {
      const QString text = QStringLiteral("%1 = %2").arg(t.label).arg(t.value, 0, 'g', 4);
      const QRect box(plot.right() - fm.horizontalAdvance(text) - 16, y - fm.height() - 4,
                      fm.horizontalAdvance(text) + 6, fm.height() + 2);
      p.fillRect(box, palette().color(QPalette::ToolTipBase));
      p.setPen(palette().color(QPalette::ToolTipText));
      p.drawText(box, Qt::AlignCenter, text);
    }
  }
  QPen pen(QColor(0xd9, 0x5f, 0x02));  // knob/policy changes: one orange, readable light and dark
  pen.setStyle(Qt::DotLine);
  p.setPen(pen);
  const ColumnGrid g = grid();
  for (const Marker& m : drawnMarkers()) {
    const int x = plot.left() + g.columnOf(m.time);
    p.drawLine(x, plot.top(), x, plot.bottom());
    p.drawText(QPoint(x + 3, plot.top() + fm.ascent() + 1),
               fm.elidedText(m.label, Qt::ElideRight, plot.right() - x - 6));
  }
}

SimTime TimeSeriesChart::timeAt(double x) const {
  const QRect plot = plotRect();
  const double frac = plot.width() > 0 ? (x - plot.left()) / plot.width() : 0;
  return view_.from() + static_cast<SimTime>(frac * static_cast<double>(view_.to() - view_.from()));
}

TimeSeriesChart::Threshold* TimeSeriesChart::thresholdNear(int y) {
  for (Threshold& t : thresholds_)
    if (t.draggable && std::abs(yOf(t.value) - y) <= kGrabPixels) return &t;
  return nullptr;
}

bool TimeSeriesChart::event(QEvent* e) {
  if (e->type() == QEvent::FontChange || e->type() == QEvent::StyleChange) ++font_generation_;
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString text = tooltipAt(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(e);
}

void TimeSeriesChart::wheelEvent(QWheelEvent* event) {
  if (plotRect().width() <= 0) return;
  axis_input_.wheel(event, timeAt(event->position().x()));
}

void TimeSeriesChart::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  const QPoint pos = event->position().toPoint();
  if (const std::optional<QString> series = legend_.seriesAt(pos)) {
    toggleSeries(*series, event->modifiers().testFlag(Qt::ControlModifier));
    return;
  }
  // Shift+drag: a box zoom, as in PlotJuggler (Ctrl+Z undoes it, ViewState::undoRange).
  if (event->modifiers().testFlag(Qt::ShiftModifier) && plotRect().contains(pos)) {
    drag_ = Drag::Box;
    box_from_x_ = box_to_x_ = pos.x();
    return;
  }
  if (Threshold* t = thresholdNear(pos.y())) {
    drag_ = Drag::Threshold;
    drag_label_ = t->label;
    update();
    return;
  }
  drag_ = Drag::Pan;
  axis_input_.press(pos);
}

void TimeSeriesChart::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  const QRect plot = plotRect();
  axis_input_.hover(plot.contains(pos) ? std::optional(timeAt(pos.x())) : std::nullopt);
  if (drag_ == Drag::None) {
    setCursor(thresholdNear(pos.y()) ? Qt::SizeVerCursor : Qt::ArrowCursor);
    return;
  }
  if (drag_ == Drag::Box) {
    box_to_x_ = std::clamp(pos.x(), plot.left(), plot.right() + 1);
    update();
    return;
  }
  if (drag_ == Drag::Threshold) {
    for (Threshold& t : thresholds_) {
      if (t.label != drag_label_) continue;
      t.value = std::clamp(valueAtY(pos.y()), t.drag_min, t.drag_max);
      emit thresholdDragged(t.label, t.value);
    }
    update();
    return;
  }
  axis_input_.drag(pos, plot.width());
}

void TimeSeriesChart::mouseReleaseEvent(QMouseEvent* event) {
  if (drag_ == Drag::Threshold)
    if (std::optional<double> v = threshold(drag_label_)) emit thresholdDropped(drag_label_, *v);
  if (drag_ == Drag::Pan) axis_input_.release();
  if (drag_ == Drag::Box && std::abs(box_to_x_ - box_from_x_) >= 3)  // a few pixels: a slip, not a box
    view_.setRange(timeAt(std::min(box_from_x_, box_to_x_)), timeAt(std::max(box_from_x_, box_to_x_)));
  drag_ = Drag::None;
  update();
  QWidget::mouseReleaseEvent(event);
}

// Double-click returns to the live edge, as in most trace viewers (and on the timeline).
void TimeSeriesChart::mouseDoubleClickEvent(QMouseEvent*) { axis_input_.doubleClick(); }

void TimeSeriesChart::contextMenuEvent(QContextMenuEvent* event) { ChartExport::showMenu(*this, event->globalPos()); }

void TimeSeriesChart::leaveEvent(QEvent* event) {
  axis_input_.hover(std::nullopt);
  QWidget::leaveEvent(event);
}

}  // namespace kvscope
