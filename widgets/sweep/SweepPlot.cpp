#include "widgets/sweep/SweepPlot.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace kvscope {

namespace {
// The same palette order for every sweep, so "policy=a" keeps its colour while runs fill in.
const QColor kColors[] = {QColor(0x1f77b4), QColor(0xd62728), QColor(0x2ca02c), QColor(0xff7f0e),
                          QColor(0x9467bd), QColor(0x8c564b), QColor(0xe377c2), QColor(0x17becf)};

// A round tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals over `span`.
double niceStep(double span, int ticks) {
  const double raw = span / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

bool numericAxis(const SweepData& data, const std::string& name) {
  if (name == "policy" || name == "dispatch" || data.points.empty()) return false;
  for (const auto& p : data.points)
    if (!p.knobs.count(name)) return false;
  return true;
}
}  // namespace

SweepPlot::SweepPlot(QWidget* parent)
    : QWidget(parent),
      metric_box_(new QComboBox(this)),
      axis_box_(new QComboBox(this)),
      chart_(new QChart),
      view_(new QChartView(chart_, this)) {
  metric_box_->setObjectName(QStringLiteral("plotMetric"));
  axis_box_->setObjectName(QStringLiteral("plotAxis"));
  auto* choices = new QHBoxLayout;
  choices->addWidget(new QLabel(tr("Metric:"), this));
  choices->addWidget(metric_box_, 1);
  choices->addWidget(new QLabel(tr("against:"), this));
  choices->addWidget(axis_box_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(choices);
  layout->addWidget(view_, 1);
  chart_->setAnimationOptions(QChart::NoAnimation);
  chart_->legend()->setAlignment(Qt::AlignBottom);
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumHeight(220);
  connect(metric_box_, &QComboBox::currentIndexChanged, this, [this] {
    rebuild();
    emit metricChanged(metric_box_->currentData().toString());
  });
  connect(axis_box_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
  rebuild();
}

std::string SweepPlot::metricKey() const { return metric_box_->currentData().toString().toStdString(); }
std::string SweepPlot::axis() const { return axis_box_->currentData().toString().toStdString(); }

void SweepPlot::setMetric(const std::string& key) {
  const int i = metric_box_->findData(QString::fromStdString(key));
  if (i >= 0) metric_box_->setCurrentIndex(i);
}

void SweepPlot::setAxis(const std::string& name) {
  const int i = axis_box_->findData(QString::fromStdString(name));
  if (i >= 0) axis_box_->setCurrentIndex(i);
}

void SweepPlot::setSweep(const SweepData& data, const SweepAnalysis& analysis) {
  data_ = data;
  analysis_ = analysis;
  fillChoices();
  rebuild();
}

void SweepPlot::fillChoices() {
  // Keep the user's choices across updates; new worker-share metrics appear as runs report them.
  const QString metric = metric_box_->currentData().toString(), axis = axis_box_->currentData().toString();
  const QSignalBlocker block_metric(metric_box_), block_axis(axis_box_);
  metric_box_->clear();
  for (const SweepMetric& m : analysis_.metrics)
    metric_box_->addItem(QString::fromStdString(m.label), QString::fromStdString(m.key));
  axis_box_->clear();
  std::vector<std::string> axes;
  for (const auto& p : data_.points)
    for (const auto& [name, value] : p.coords)
      if (std::find(axes.begin(), axes.end(), name) == axes.end()) axes.push_back(name);
  for (const auto& name : axes)
    if (numericAxis(data_, name)) axis_box_->addItem(QString::fromStdString(name), QString::fromStdString(name));
  metric_box_->setCurrentIndex(
      std::max(0, metric_box_->findData(metric.isEmpty() ? QStringLiteral("e2e_mean_s") : metric)));
  axis_box_->setCurrentIndex(std::max(0, axis_box_->findData(axis)));
}

// A group's mean line and its 95% band (the band's lines parented to its area).
SweepPlot::Band SweepPlot::makeBand(const QString& name, const QColor& color, const QList<QPointF>& mean,
                                    const QList<QPointF>& lower, const QList<QPointF>& upper) {
  Band band;
  band.name = name;
  band.area = new QAreaSeries;
  band.lower = new QLineSeries(band.area);
  band.upper = new QLineSeries(band.area);
  band.lower->replace(lower);
  band.upper->replace(upper);
  band.area->setLowerSeries(band.lower);
  band.area->setUpperSeries(band.upper);
  band.area->setName(band.name + tr(" 95% CI"));
  QColor fill = color;
  fill.setAlpha(50);
  band.area->setBrush(fill);
  band.area->setPen(QPen(fill.darker(), 0));
  band.mean = new QLineSeries;
  band.mean->setName(band.name);
  band.mean->replace(mean);
  band.mean->setPen(QPen(color, 2));
  band.mean->setPointsVisible(true);
  return band;
}

// Ranges set by hand (createDefaultAxes freezes them), with a margin so the end points show.
void SweepPlot::fitAxes(QValueAxis& x_axis, QValueAxis& y_axis, double x_lo, double x_hi, double y_lo, double y_hi) {
  const double x_pad = x_hi > x_lo ? (x_hi - x_lo) * 0.05 : 1;
  const double y_pad = y_hi > y_lo ? (y_hi - y_lo) * 0.1 : std::max(1e-9, std::abs(y_hi) * 0.1);
  x_axis.setRange(x_lo - x_pad, x_hi + x_pad);
  // Ticks on round knob values (0, 50, 100, ...), not on the padded range's ends.
  x_axis.setTickType(QValueAxis::TicksDynamic);
  x_axis.setTickAnchor(0);
  x_axis.setTickInterval(niceStep(x_hi - x_lo + 2 * x_pad, 5));
  x_axis.setLabelFormat(QStringLiteral("%g"));
  // Latencies, rates and counts are never negative: the axis need not show below 0 for them.
  y_axis.setRange(y_lo >= 0 ? std::max(0.0, y_lo - y_pad) : y_lo - y_pad, y_hi + y_pad);
  y_axis.applyNiceNumbers();
}

void SweepPlot::rebuild() {
  chart_->removeAllSeries();  // deletes the series, the band bounds with them (parented to their area)
  for (QAbstractAxis* a : chart_->axes()) {
    chart_->removeAxis(a);
    delete a;
  }
  bands_.clear();
  const std::string key = metricKey(), axis = axis_box_->currentData().toString().toStdString();
  const std::size_t m = analysis_.metricIndex(key);
  if (axis.empty() || m >= analysis_.metrics.size()) {
    chart_->setTitle(data_.points.empty() ? QString() : tr("no numeric knob axis in this grid to plot against"));
    return;
  }
  const SweepMetric& metric = analysis_.metrics[m];
  const double scale = metric.kind == SweepMetric::Kind::Fraction ? 100 : 1;  // fractions read as %
  chart_->setTitle(tr("%1 against %2 (mean, log-scale 95% CI across seeds)")
                       .arg(QString::fromStdString(metric.label), QString::fromStdString(axis)));

  // Group points by the values of every other axis; each group is a line over the plotted knob.
  std::map<std::string, std::vector<std::size_t>> groups;
  std::vector<std::string> order;
  for (std::size_t p = 0; p < data_.points.size(); ++p) {
    std::string name;
    for (const auto& [a, v] : data_.points[p].coords)
      if (a != axis) name += (name.empty() ? "" : ",") + a + "=" + v;
    if (!groups.count(name)) order.push_back(name);
    groups[name].push_back(p);
  }
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  auto* x_axis = new QValueAxis;
  auto* y_axis = new QValueAxis;
  x_axis->setTitleText(QString::fromStdString(axis));
  y_axis->setTitleText(QString::fromStdString(metric.label));
  chart_->addAxis(x_axis, Qt::AlignBottom);
  chart_->addAxis(y_axis, Qt::AlignLeft);
  for (std::size_t g = 0; g < order.size(); ++g) {
    std::vector<std::size_t> pts = groups[order[g]];
    std::sort(pts.begin(), pts.end(),
              [&](auto a, auto b) { return data_.points[a].knobs.at(axis) < data_.points[b].knobs.at(axis); });
    QList<QPointF> mean, lower, upper;
    for (std::size_t p : pts) {
      const MetricCell& c = analysis_.cells[p][m];
      if (c.values.empty()) continue;  // not run yet
      const double x = data_.points[p].knobs.at(axis);
      const double y = c.interval.mean * scale;
      // One seed has no interval: the band collapses onto the mean rather than vanishing. The
      // interval is the log-scale one (never below zero, wider above the mean).
      const double lo = c.interval.hasInterval() ? c.interval.low() * scale : y;
      const double hi = c.interval.hasInterval() ? c.interval.high() * scale : y;
      mean << QPointF(x, y);
      lower << QPointF(x, lo);
      upper << QPointF(x, hi);
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, lo), y_hi = std::max(y_hi, hi);
    }
    if (mean.isEmpty()) continue;
    const QColor color = kColors[g % std::size(kColors)];
    const Band band =
        makeBand(order[g].empty() ? QString::fromStdString(metric.label) : QString::fromStdString(order[g]), color,
                 mean, lower, upper);
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(band.area), static_cast<QAbstractSeries*>(band.mean)}) {
      chart_->addSeries(s);
      s->attachAxis(x_axis);
      s->attachAxis(y_axis);
    }
    for (QLegendMarker* marker : chart_->legend()->markers(band.area)) marker->setVisible(false);
    bands_.push_back(band);
  }
  if (bands_.empty()) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  fitAxes(*x_axis, *y_axis, x_lo, x_hi, y_lo, y_hi);
  if (scale != 1) y_axis->setLabelFormat(QStringLiteral("%.1f%%"));
}

}  // namespace kvscope
