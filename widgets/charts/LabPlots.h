#pragma once
// The lab's two static figures (agentic-pd-hybrid scripts/analysis/plot_cache_efficiency.py): the
// ECDF of uncached tokens per request on a log x axis, and the prefix-cache hit rate by turn
// index. Painted directly from a few numbers; each keeps its data and repaints when it changes.
#include <QWidget>

#include <map>
#include <vector>

namespace kvscope {

// An empirical CDF from its percentiles: `quantiles[q]` is percentile q, q = 0..100.
class EcdfPlot : public QWidget {
  Q_OBJECT
 public:
  explicit EcdfPlot(QWidget* parent = nullptr);
  void setQuantiles(std::vector<double> quantiles);
  const std::vector<double>& quantiles() const { return quantiles_; }
  QSize minimumSizeHint() const override { return {120, 80}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  std::vector<double> quantiles_;
};

// One bar per turn index: the hit rate in [0, 1]; the last bucket stands for that turn and later.
class TurnBarPlot : public QWidget {
  Q_OBJECT
 public:
  explicit TurnBarPlot(QWidget* parent = nullptr);
  void setRates(std::map<int, double> rates, int last_bucket);
  const std::map<int, double>& rates() const { return rates_; }
  QSize minimumSizeHint() const override { return {120, 80}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  std::map<int, double> rates_;
  int last_bucket_ = 100;
};

}  // namespace kvscope
