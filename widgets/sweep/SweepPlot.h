#pragma once
// A sweep's metric against one numeric knob axis: per value of the other axes one series, drawn as
// its mean line over a translucent 95% confidence band (a QAreaSeries between the lower and upper
// bounds), so overlapping bands show at a glance which differences are noise. Qt Charts stays behind
// this one widget, as the time-series charts are behind TimeSeriesChart.
#include <QColor>
#include <QList>
#include <QPointF>
#include <QWidget>

#include <string>
#include <vector>

#include "core/sweep/SweepAnalysis.h"
#include "core/sweep/SweepData.h"

class QAreaSeries;
class QChart;
class QChartView;
class QComboBox;
class QLineSeries;
class QValueAxis;

namespace kvscope {

class SweepPlot : public QWidget {
  Q_OBJECT
 public:
  struct Band {
    QString name;  // the other axes' values ("policy=kv-aware"), or the metric's label
    QLineSeries* mean = nullptr;
    QLineSeries* lower = nullptr;
    QLineSeries* upper = nullptr;
    QAreaSeries* area = nullptr;
  };

  explicit SweepPlot(QWidget* parent = nullptr);

  void setSweep(const SweepData& data, const SweepAnalysis& analysis);
  void setMetric(const std::string& key);
  void setAxis(const std::string& name);  // a knob axis of the grid (its values parse as numbers)

  std::string metricKey() const;  // (not metric(): QWidget::metric is a virtual of another meaning)
  std::string axis() const;
  const std::vector<Band>& bands() const { return bands_; }
  QChart* chart() const { return chart_; }

 signals:
  void metricChanged(const QString& key);

 private:
  void fillChoices();
  void rebuild();
  static Band makeBand(const QString& name, const QColor& color, const QList<QPointF>& mean,
                       const QList<QPointF>& lower, const QList<QPointF>& upper);
  static void fitAxes(QValueAxis& x_axis, QValueAxis& y_axis, double x_lo, double x_hi, double y_lo, double y_hi);

  SweepData data_;
  SweepAnalysis analysis_;
  QComboBox* metric_box_;
  QComboBox* axis_box_;
  QChart* chart_;
  QChartView* view_;
  std::vector<Band> bands_;
};

}  // namespace kvscope
