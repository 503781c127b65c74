#include "widgets/timeline/ReplayScrubber.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kvscope {

ReplayScrubber::ReplayScrubber(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(32);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Event density of the whole recording; click or drag to seek"));
}

void ReplayScrubber::setDensity(std::vector<SimTime> times, SimTime end) {
  times_ = std::move(times);
  end_ = end;
  update();
}

void ReplayScrubber::setPosition(SimTime time) {
  if (time == position_) return;
  position_ = time;
  update();
}

SimTime ReplayScrubber::timeAt(int x) const {
  const double frac = std::clamp(static_cast<double>(x - 4) / std::max(1, width() - 8), 0.0, 1.0);
  return static_cast<SimTime>(frac * static_cast<double>(end_));
}

int ReplayScrubber::xOf(SimTime t) const {
  if (end_ <= 0) return 4;
  return 4 + static_cast<int>(static_cast<double>(t) / static_cast<double>(end_) * (width() - 8));
}

void ReplayScrubber::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  const int columns = std::max(1, width() - 8);
  std::vector<int> bins(static_cast<std::size_t>(columns), 0);
  if (end_ > 0)
    for (SimTime t : times_) {
      const int c =
          std::clamp(static_cast<int>(static_cast<double>(t) / static_cast<double>(end_) * columns), 0, columns - 1);
      ++bins[static_cast<std::size_t>(c)];
    }
  const int peak = std::max(1, *std::max_element(bins.begin(), bins.end()));
  QColor bar = palette().color(QPalette::Text);
  bar.setAlpha(110);
  const int h = height() - 6;
  for (int c = 0; c < columns; ++c) {
    const int n = bins[static_cast<std::size_t>(c)];
    if (n == 0) continue;
    // Square root: a few crashes still show beside thousands of evictions.
    const int bh = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(n) / peak) * h));
    p.fillRect(4 + c, height() - 3 - bh, 1, bh, bar);
  }
  p.setPen(palette().color(QPalette::Mid));
  p.drawRect(rect().adjusted(0, 0, -1, -1));
  const int x = xOf(position_);
  p.fillRect(QRect(x - 1, 0, 3, height()), palette().color(QPalette::Highlight));
}

void ReplayScrubber::mousePressEvent(QMouseEvent* event) {
  dragging_ = true;
  position_ = timeAt(static_cast<int>(event->position().x()));
  update();
}

void ReplayScrubber::mouseMoveEvent(QMouseEvent* event) {
  if (!dragging_) return;
  position_ = timeAt(static_cast<int>(event->position().x()));
  update();
}

// Seeks once on release: each seek restates the run, so dragging does not seek per pixel.
void ReplayScrubber::mouseReleaseEvent(QMouseEvent* event) {
  if (!dragging_) return;
  dragging_ = false;
  position_ = timeAt(static_cast<int>(event->position().x()));
  emit seekRequested(position_);
}

}  // namespace kvscope
