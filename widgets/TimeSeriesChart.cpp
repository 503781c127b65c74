#include "TimeSeriesChart.h"

#include <QMouseEvent>
#include <QPainter>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "ViewState.h"
#include "telemetry/MinMaxSeries.h"

namespace kvscope {

TimeSeriesChart::TimeSeriesChart(ViewState& view, const QString& title, QWidget* parent)
    : QChartView(parent), view_(view), x_axis_(new QValueAxis), y_axis_(new QValueAxis) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->setAnimationOptions(QChart::NoAnimation);  // live data: animations lag and cost
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->setBackgroundRoundness(0);
  x_axis_->setTitleText("run time (s)");  // simulated, replayed or a live cluster's wall clock
  x_axis_->setLabelFormat("%.0f");
  chart->addAxis(x_axis_, Qt::AlignBottom);
  chart->addAxis(y_axis_, Qt::AlignLeft);
  setChart(chart);
  applyPalette();
  setRenderHint(QPainter::Antialiasing, false);
  setMinimumSize(320, 180);
  connect(&view_, &ViewState::rangeChanged, this, &TimeSeriesChart::onRangeChanged);
  range_pending_ = true;
  applyRange(false);
}

// Follow the system palette (light or dark, and a switch while running) instead of the chart
// theme's fixed colours.
void TimeSeriesChart::applyPalette() {
  const QPalette& pal = palette();
  chart()->setBackgroundBrush(pal.color(QPalette::Base));
  chart()->setTitleBrush(pal.color(QPalette::Text));
  chart()->legend()->setLabelColor(pal.color(QPalette::Text));
  for (QValueAxis* axis : {x_axis_, y_axis_}) {
    axis->setLabelsColor(pal.color(QPalette::Text));
    axis->setGridLineColor(pal.color(QPalette::Mid));
    axis->setTitleBrush(pal.color(QPalette::Text));
  }
}

void TimeSeriesChart::changeEvent(QEvent* event) {
  QChartView::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) applyPalette();
}

int TimeSeriesChart::addSeries(const QString& name, const QColor& color) {
  auto* s = new QLineSeries;
  s->setName(name);
  QPen pen(color);
  pen.setWidth(1);
  pen.setCosmetic(true);  // cosmetic 1-px lines take Qt's fast path, wider ones the path stroker
  s->setPen(pen);
  chart()->addSeries(s);
  s->attachAxis(x_axis_);
  s->attachAxis(y_axis_);
  series_.push_back(s);
  series_max_.push_back(0);
  return static_cast<int>(series_.size()) - 1;
}

void TimeSeriesChart::clearSeries() {
  for (QLineSeries* s : series_) {
    chart()->removeSeries(s);
    delete s;
  }
  series_.clear();
  series_max_.clear();
}

int TimeSeriesChart::plotColumns() const {
  return std::max(16, static_cast<int>(chart()->plotArea().width()));
}

void TimeSeriesChart::setSeriesData(int index, const MinMaxSeries& data, double scale) {
  if (index == 0) applyRange(true);
  const std::vector<MinMaxPoint> points = data.decimate(view_.from(), view_.to(), plotColumns());
  QList<QPointF> xy;
  xy.reserve(static_cast<qsizetype>(points.size() * 2));
  double hi = 0;
  for (const MinMaxPoint& p : points) {
    hi = std::max(hi, p.max * scale);
    const double t = timeToSeconds(p.time);
    xy.append(QPointF(t, p.min * scale));
    // Min then max in the same column: the line reaches the bucket's peak, so no spike is lost.
    if (p.max != p.min) xy.append(QPointF(t, p.max * scale));
  }
  if (index == 0) points_last_drawn_ = 0;
  points_last_drawn_ += static_cast<int>(xy.size());
  series_[static_cast<std::size_t>(index)]->replace(xy);
  series_max_[static_cast<std::size_t>(index)] = hi;
  if (!fixed_y_) fitY();
}

void TimeSeriesChart::setThreshold(const QString& label, double value, const QColor& color) {
  QLineSeries* line = nullptr;
  for (auto& [name, s] : thresholds_)
    if (name == label) line = s;
  if (!line) {
    line = new QLineSeries;
    line->setName(label);
    QPen pen(color);
    pen.setStyle(Qt::DashLine);
    pen.setWidth(1);
    pen.setCosmetic(true);
    line->setPen(pen);
    chart()->addSeries(line);
    line->attachAxis(x_axis_);
    line->attachAxis(y_axis_);
    thresholds_.emplace_back(label, line);
  }
  line->setProperty("level", value);
  placeThreshold(line);
  if (!fixed_y_) fitY();
}

// Spans the visible range only: Qt Charts draws far-off points poorly.
void TimeSeriesChart::placeThreshold(QLineSeries* line) {
  const double level = line->property("level").toDouble();
  line->replace({QPointF(timeToSeconds(view_.from()), level), QPointF(timeToSeconds(view_.to()), level)});
}

void TimeSeriesChart::setMarkers(std::vector<Marker> markers) {
  markers_ = std::move(markers);
  viewport()->update();
}

void TimeSeriesChart::setHighlight(SimTime from, SimTime to) {
  highlight_from_ = from;
  highlight_to_ = to;
  viewport()->update();
}

void TimeSeriesChart::setFixedYRange(double min, double max) {
  fixed_y_ = true;
  y_axis_->setRange(min, max);
  y_axis_->setTickCount(6);
}

void TimeSeriesChart::setYLabelFormat(const QString& format) { y_axis_->setLabelFormat(format); }

namespace {
// The smallest 1, 2, 2.5 or 5 x 10^k at or above `v`: a tidy axis top that changes rarely.
double niceTop(double v) {
  if (!(v > 0)) return 1;
  const double magnitude = std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= v) return m * magnitude;
  return 10 * magnitude;
}
}  // namespace

// Every axis change makes Qt Charts lay out its labels and recompute each series on the axis, so
// the range is set only when its tidy top actually moves.
void TimeSeriesChart::fitY() {
  double hi = 0;
  for (double m : series_max_) hi = std::max(hi, m);
  for (auto& [name, s] : thresholds_) hi = std::max(hi, s->property("level").toDouble());
  const double top = niceTop(hi * 1.05);
  if (top == y_axis_->max() && y_axis_->min() == 0) return;
  y_axis_->setRange(0, top);
  y_axis_->setTickCount(6);
}

// Following the live edge moves the range every frame, and an axis change makes Qt Charts recompute
// every series on it - with the points the frame is about to replace. So the change waits for the
// frame's setSeriesData(0, ...), which drops the stale points first (one geometry pass instead of
// two); if no new data comes (a pan while paused), the event loop applies it with the old points.
void TimeSeriesChart::onRangeChanged() {
  if (range_pending_) return;
  range_pending_ = true;
  QTimer::singleShot(0, this, [this] { applyRange(false); });
}

void TimeSeriesChart::applyRange(bool drop_stale_points) {
  if (!range_pending_) return;
  range_pending_ = false;
  if (drop_stale_points)
    for (QLineSeries* s : series_) s->clear();
  x_axis_->setRange(timeToSeconds(view_.from()), timeToSeconds(view_.to()));
  for (auto& [name, line] : thresholds_) placeThreshold(line);
  viewport()->update();
}

SimTime TimeSeriesChart::timeAt(double x) const {
  const QRectF plot = chart()->plotArea();
  const double frac = plot.width() > 0 ? (x - plot.left()) / plot.width() : 0;
  return view_.from() + static_cast<SimTime>(frac * static_cast<double>(view_.to() - view_.from()));
}

void TimeSeriesChart::drawForeground(QPainter* painter, const QRectF& rect) {
  QChartView::drawForeground(painter, rect);
  const QRectF plot = chart()->plotArea();
  const double span = static_cast<double>(std::max<SimTime>(1, view_.to() - view_.from()));
  auto xOf = [&](SimTime t) { return plot.left() + static_cast<double>(t - view_.from()) / span * plot.width(); };
  painter->save();
  painter->setClipRect(plot);
  if (highlight_to_ > highlight_from_) {
    QColor fill = palette().color(QPalette::Highlight);
    fill.setAlpha(50);
    painter->fillRect(QRectF(QPointF(xOf(highlight_from_), plot.top()), QPointF(xOf(highlight_to_), plot.bottom())), fill);
  }
  QPen pen(QColor(0xd9, 0x5f, 0x02));  // knob/policy changes: one orange, readable light and dark
  pen.setStyle(Qt::DotLine);
  pen.setWidthF(1.5);
  painter->setPen(pen);
  for (const Marker& m : markers_) {
    if (m.time < view_.from() || m.time > view_.to()) continue;
    const double x = xOf(m.time);
    painter->drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    painter->drawText(QPointF(x + 3, plot.top() + 12), m.label);
  }
  painter->restore();
}

void TimeSeriesChart::wheelEvent(QWheelEvent* event) {
  const SimTime anchor = timeAt(event->position().x());
  const double factor = event->angleDelta().y() > 0 ? 0.8 : 1.25;
  const SimTime from = anchor - static_cast<SimTime>(static_cast<double>(anchor - view_.from()) * factor);
  const SimTime to = anchor + static_cast<SimTime>(static_cast<double>(view_.to() - anchor) * factor);
  view_.setRange(std::max<SimTime>(0, from), std::max(to, from + secondsToTime(1)));
  event->accept();
}

void TimeSeriesChart::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QChartView::mousePressEvent(event);
  dragging_ = true;
  drag_origin_ = event->position();
  drag_from_ = view_.from();
  drag_to_ = view_.to();
}

void TimeSeriesChart::mouseMoveEvent(QMouseEvent* event) {
  if (!dragging_) return QChartView::mouseMoveEvent(event);
  const QRectF plot = chart()->plotArea();
  if (plot.width() <= 0) return;
  const double dx = event->position().x() - drag_origin_.x();
  if (std::abs(dx) < 2) return;
  const SimTime shift = static_cast<SimTime>(-dx / plot.width() * static_cast<double>(drag_to_ - drag_from_));
  const SimTime from = std::max<SimTime>(0, drag_from_ + shift);
  view_.setRange(from, from + (drag_to_ - drag_from_));
}

void TimeSeriesChart::mouseReleaseEvent(QMouseEvent* event) {
  dragging_ = false;
  QChartView::mouseReleaseEvent(event);
}

// Double-click returns to the live edge, as in most trace viewers.
void TimeSeriesChart::mouseDoubleClickEvent(QMouseEvent*) { view_.setFollowLive(true); }

}  // namespace kvscope
