#pragma once
// The replay's timeline bar: the whole recording's event density as a histogram, the current
// position as a handle; click or drag to seek.
#include <QWidget>

#include <vector>

#include "core/model/Ids.h"

namespace kvscope {

class ReplayScrubber : public QWidget {
  Q_OBJECT
 public:
  explicit ReplayScrubber(QWidget* parent = nullptr);

  // Event times over [0, end]; binned to the widget's width when painted.
  void setDensity(std::vector<SimTime> times, SimTime end);
  void setPosition(SimTime time);
  SimTime position() const { return position_; }
  SimTime end() const { return end_; }
  SimTime timeAt(int x) const;
  int xOf(SimTime t) const;
  QSize sizeHint() const override { return {400, 40}; }

 signals:
  void seekRequested(SimTime time);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  std::vector<SimTime> times_;
  SimTime end_ = 0;
  SimTime position_ = 0;
  bool dragging_ = false;
};

}  // namespace kvscope
