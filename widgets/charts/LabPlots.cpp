#include "widgets/charts/LabPlots.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

#include "widgets/charts/AxisTicks.h"

namespace kvscope {

namespace {

constexpr int kLeft = 44, kBottom = 30, kTop = 10, kRight = 12;

QRect plotArea(const QWidget& w) { return QRect(kLeft, kTop, w.width() - kLeft - kRight, w.height() - kTop - kBottom); }

// Fractions 0..1 on the y axis, as percentages, with grid lines.
void paintFractionAxis(QPainter& p, const QRect& plot, const QString& title) {
  const QColor grid(225, 225, 225);
  for (int pct = 0; pct <= 100; pct += 25) {
    const int y = plot.bottom() - plot.height() * pct / 100;
    p.setPen(grid);
    p.drawLine(plot.left(), y, plot.right(), y);
    p.setPen(Qt::black);
    p.drawText(QRect(0, y - 8, kLeft - 4, 16), Qt::AlignRight | Qt::AlignVCenter, QString::number(pct) + "%");
  }
  p.drawText(QRect(plot.left(), plot.bottom() + 14, plot.width(), 16), Qt::AlignHCenter | Qt::AlignTop, title);
}

void paintEmpty(QPainter& p, const QRect& r, const QString& what) {
  p.setPen(Qt::gray);
  p.drawText(r, Qt::AlignCenter | Qt::TextWordWrap, what);
}

}  // namespace

EcdfPlot::EcdfPlot(QWidget* parent) : QWidget(parent) {
  setToolTip(
      tr("Share of requests (y) with at most x prompt tokens not served from the prefix cache, log x "
         "(the lab's uncached-token ECDF)"));
}

void EcdfPlot::setQuantiles(std::vector<double> quantiles) {
  if (quantiles == quantiles_) return;
  quantiles_ = std::move(quantiles);
  update();
}

void EcdfPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QRect plot = plotArea(*this);
  if (quantiles_.size() < 2 || plot.width() < 20 || plot.height() < 20)
    return paintEmpty(p, rect(), tr("No finished request with a known cache hit yet"));
  // Log x from the decade below the smallest nonzero value to the decade above the largest; a
  // request that missed nothing (0 uncached) sits on the left edge.
  const double hi = std::max(10.0, quantiles_.back());
  double lo_value = hi;
  for (double v : quantiles_)
    if (v >= 1) lo_value = std::min(lo_value, v);
  const int d0 = static_cast<int>(std::floor(std::log10(std::max(1.0, lo_value))));
  const int d1 = std::max(d0 + 1, static_cast<int>(std::ceil(std::log10(hi))));
  const auto xOf = [&](double v) {
    const double l = std::log10(std::max(v, std::pow(10.0, d0)));
    return plot.left() + plot.width() * (l - d0) / (d1 - d0);
  };
  paintFractionAxis(p, plot, tr("uncached tokens (log)"));
  for (int d = d0; d <= d1; ++d) {
    const double x = xOf(std::pow(10.0, d));
    p.setPen(QColor(220, 220, 220));
    p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    p.setPen(Qt::black);
    const QString label = d >= 6   ? QStringLiteral("%1M").arg(std::pow(10.0, d - 6))
                          : d >= 3 ? QStringLiteral("%1K").arg(std::pow(10.0, d - 3))
                                   : QString::number(std::pow(10.0, d));
    p.drawText(QRectF(x - 30, plot.bottom() + 2, 60, 14), Qt::AlignHCenter | Qt::AlignTop, label);
  }
  QPainterPath path;
  for (std::size_t q = 0; q < quantiles_.size(); ++q) {
    const QPointF pt(xOf(quantiles_[q]), plot.bottom() - plot.height() * static_cast<double>(q) / 100.0);
    if (q == 0) path.moveTo(pt.x(), plot.bottom());
    path.lineTo(pt);
  }
  p.setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));
  p.drawPath(path);
}

TurnBarPlot::TurnBarPlot(QWidget* parent) : QWidget(parent) {
  setToolTip(tr("Prefix-cache hit rate of the requests of each turn index (cached / prompt tokens)"));
}

void TurnBarPlot::setRates(std::map<int, double> rates, int last_bucket) {
  if (rates == rates_ && last_bucket == last_bucket_) return;
  rates_ = std::move(rates);
  last_bucket_ = last_bucket;
  update();
}

void TurnBarPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QRect plot = plotArea(*this);
  if (rates_.empty() || plot.width() < 20 || plot.height() < 20)
    return paintEmpty(p, rect(), tr("No finished request with a known cache hit yet"));
  paintFractionAxis(p, plot, tr("turn"));
  const int last = rates_.rbegin()->first;
  const double slot = static_cast<double>(plot.width()) / last;
  const AxisTicks ticks = AxisTicks::make(1, last, std::max(2, plot.width() / 50));
  p.setPen(Qt::black);
  for (const auto& t : ticks.ticks) {
    const double x = plot.left() + slot * (t.value - 0.5);
    const QString label = static_cast<int>(t.value) == last_bucket_ ? t.label + "+" : t.label;
    p.drawText(QRectF(x - 20, plot.bottom() + 2, 40, 14), Qt::AlignHCenter | Qt::AlignTop, label);
  }
  for (const auto& [turn, rate] : rates_) {
    const double x = plot.left() + slot * (turn - 1);
    const double h = plot.height() * std::clamp(rate, 0.0, 1.0);
    p.fillRect(QRectF(x + std::min(1.0, slot * 0.1), plot.bottom() - h, std::max(1.0, slot * 0.8), h),
               QColor(0x2c, 0xa0, 0x2c));
  }
}

}  // namespace kvscope
