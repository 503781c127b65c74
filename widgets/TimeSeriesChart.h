#pragma once
// Our one time-series chart (Qt Charts is deprecated from Qt 6.10; a move to Qt Graphs stays in
// this file). Draws each gauge's visible window decimated to min and max per pixel column with
// QXYSeries::replace() (never append() in a loop), threshold lines, and knob-change markers and a
// selected window painted over the plot. Wheel zooms and drag pans the range shared via ViewState.
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <vector>

#include "model/Ids.h"

namespace kvscope {

class MinMaxSeries;
class ViewState;

class TimeSeriesChart : public QChartView {
  Q_OBJECT
 public:
  struct Marker {
    SimTime time = 0;
    QString label;
  };

  TimeSeriesChart(ViewState& view, const QString& title, QWidget* parent = nullptr);

  int addSeries(const QString& name, const QColor& color);
  void clearSeries();  // drops the data series (a new run), keeps thresholds
  // Redraws series `index` from `data` over the view's range, values multiplied by `scale`.
  // Call it for every series, index 0 first, once per frame: setting series 0 applies a pending
  // change of the visible range (see applyRange()).
  void setSeriesData(int index, const MinMaxSeries& data, double scale = 1.0);
  int seriesCount() const { return static_cast<int>(series_.size()); }
  const QLineSeries* series(int index) const { return series_[static_cast<std::size_t>(index)]; }

  // A horizontal reference line (e.g. rho * capacity); replaced by label.
  void setThreshold(const QString& label, double value, const QColor& color);
  void setMarkers(std::vector<Marker> markers);
  const std::vector<Marker>& markers() const { return markers_; }
  void setHighlight(SimTime from, SimTime to);  // to <= from clears it
  void setFixedYRange(double min, double max);  // otherwise the y axis fits the data
  void setYLabelFormat(const QString& format);

  // Points handed to the chart by the last redraw of every series (the decimation's output).
  int pointsLastDrawn() const { return points_last_drawn_; }
  int plotColumns() const;

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void changeEvent(QEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  void applyPalette();
  void onRangeChanged();
  void applyRange(bool drop_stale_points);
  void fitY();
  void placeThreshold(QLineSeries* line);
  SimTime timeAt(double x) const;

  ViewState& view_;
  QValueAxis* x_axis_;
  QValueAxis* y_axis_;
  std::vector<QLineSeries*> series_;
  std::vector<double> series_max_;  // the drawn maximum of each series, for the y axis
  std::vector<std::pair<QString, QLineSeries*>> thresholds_;
  std::vector<Marker> markers_;
  SimTime highlight_from_ = 0, highlight_to_ = 0;
  bool fixed_y_ = false;
  bool range_pending_ = false;
  int points_last_drawn_ = 0;
  bool dragging_ = false;
  QPointF drag_origin_;
  SimTime drag_from_ = 0, drag_to_ = 0;
};

}  // namespace kvscope
