#pragma once
// Our one time-series chart, painted directly (the way an oscilloscope or PlotJuggler draws): for
// every pixel column of the plot, one vertical run from the min to the max the series held in that
// column's time (MinMaxSeries::envelope), so no zoom level, seek or sample rate can hide a spike or
// draw a line through a gap. Gauges are sample-and-hold; point series (per-request latencies) are
// not. Also: dashed threshold lines (optionally dragged to set a knob), knob-change markers, a
// selected window, ghost series (a what-if preview), round axis ticks, wheel zoom and drag pan on
// the range shared through ViewState (TimeAxisInput, as the timeline does), the shared cursor with
// each series' value where it stands, and a tooltip with the values at the pointer.
#include <QWidget>

#include <optional>
#include <tuple>
#include <vector>

#include <QSet>
#include "core/model/Ids.h"
#include "core/telemetry/MinMaxSeries.h"

#include "widgets/charts/AxisTicks.h"
#include "widgets/charts/ChartLegend.h"
#include "widgets/charts/WorkerBand.h"
#include "widgets/common/StaticTextCache.h"
#include "widgets/common/TimeAxisInput.h"

namespace kvscope {

class ViewState;

class TimeSeriesChart : public QWidget {
  Q_OBJECT
 public:
  struct Marker {
    SimTime time = 0;
    QString label;
  };
  // Ghost and GhostPoints: a what-if preview's future, drawn faint and under the real series, held
  // like a gauge or as points like a latency. Compared and ComparedPoints: the same series of the
  // run compared with this one (ViewState::comparison), drawn dashed beside it.
  enum class Style { Gauge, Points, Ghost, GhostPoints, Compared, ComparedPoints };
  static bool isGhost(Style s) { return s == Style::Ghost || s == Style::GhostPoints; }
  static bool isCompared(Style s) { return s == Style::Compared || s == Style::ComparedPoints; }
  static bool isPoints(Style s) { return s == Style::Points || s == Style::GhostPoints || s == Style::ComparedPoints; }

  TimeSeriesChart(ViewState& view, const QString& title, QWidget* parent = nullptr);
  const QString& title() const { return title_; }

  // A ghost's `owner` is the series it forecasts ("D1" for "D1 with the change"): it fades and
  // hides with it, and the legend names it by what is left ("with the change"). A compared
  // series' owner is this run's series of the same name: they hide together.
  int addSeries(const QString& name, const QColor& color, Style style = Style::Gauge, const QString& owner = {});
  void clearSeries();  // drops the data series (a new run), keeps thresholds
  // Takes series `index`'s envelope from `data` over the view's range, values times `scale`.
  void setSeriesData(int index, const MinMaxSeries& data, double scale = 1.0);
  // The compared run's series `index` (a Compared style): its time t drawn at t + shift, held to
  // `hold_until` (that run's own end).
  void setComparedData(int index, const MinMaxSeries& data, double scale, SimTime shift, SimTime hold_until);
  // Columns computed by the panel (a difference of two series), one per plot column.
  void setSeriesColumns(int index, std::vector<EnvelopeColumn> columns);
  void clearSeriesData(int index);  // draws nothing for it (e.g. a ghost with no preview)
  // Gauges hold their newest sample up to here (the run's current time).
  void setHoldUntil(SimTime now) { hold_until_ = now; }
  int seriesCount() const { return static_cast<int>(series_.size()); }
  // A series hidden from the legend (click; Ctrl+click isolates), by name: it stays hidden when the
  // panel rebuilds its series.
  void setSeriesHidden(const QString& name, bool hidden);
  bool isSeriesHidden(const QString& name) const { return hidden_.contains(name); }
  void toggleSeries(const QString& name, bool isolate);
  const ChartLegend& legend() const { return legend_; }
  QString seriesName(int index) const { return series_[static_cast<std::size_t>(index)].name; }
  // What the last paint drew (or the next will) for series `index`: one entry per plot column.
  const std::vector<EnvelopeColumn>& drawnColumns(int index) const {
    return series_[static_cast<std::size_t>(index)].columns;
  }
  // The envelope setSeriesData would draw for `data` (a gauge) over the view's range, times `scale`.
  std::vector<EnvelopeColumn> envelopeOf(const MinMaxSeries& data, double scale = 1.0) const;
  // Many workers: the others as one shaded min..max band with a median line, under the series;
  // `legend` names it ("band: 60 other D (min/median/max)"). An empty band draws nothing.
  void setBand(const QString& legend, std::vector<BandColumn> band, const QColor& color);
  void clearBand();
  const std::vector<BandColumn>& drawnBand() const { return band_; }
  const QString& bandLegend() const { return band_legend_; }

  // A horizontal reference line (e.g. rho * capacity), replaced by label. A draggable one can be
  // moved with the mouse within [drag_min, drag_max]: thresholdDragged while moving,
  // thresholdDropped on release.
  void setThreshold(const QString& label, double value, const QColor& color);
  void setDraggableThreshold(const QString& label, double drag_min, double drag_max);
  std::optional<double> threshold(const QString& label) const;
  void setMarkers(std::vector<Marker> markers);
  const std::vector<Marker>& markers() const { return markers_; }
  // Markers as drawn: those in the same few pixels merged into one label ("K=200, rho=0.9").
  std::vector<Marker> drawnMarkers() const;
  void setHighlight(SimTime from, SimTime to);                 // to <= from clears it
  void setFixedYRange(double min, double max);                 // otherwise the y axis fits the data from 0
  void setSignedY(bool symmetric) { signed_y_ = symmetric; }   // fits -m..m to the data (a difference)
  void setIntegerValues(bool integer) { integer_ = integer; }  // y ticks at whole numbers only
  // Said after every value the cursor and the tooltip read out ("%", "s", "requests").
  void setUnit(const QString& unit) { unit_ = unit; }

  // Geometry, for tests and hit-testing: the plot rectangle (one pixel column per envelope
  // column), the grid its columns cover, and the pixel row of a value.
  QRect plotRect() const;
  ColumnGrid grid() const;
  int plotColumns() const { return plotRect().width(); }
  int yOf(double value) const;
  double valueAtY(int y) const;
  double yMin() const { return y_min_; }
  double yMax() const { return y_max_; }
  QString tickLabelsY() const;  // the y axis labels, top to bottom, for tests ("100|80|...")
  // What the shared cursor reads out at ViewState::cursorTime(): one "name: value" per series with
  // data in its column, the band's median last. Empty when the cursor is not over this range.
  QStringList cursorReadout() const;

 signals:
  void thresholdDragged(const QString& label, double value);
  void thresholdDropped(const QString& label, double value);
  // Some series' columns were computed for another plot width (the y labels' margin moved): the
  // panel should set its data again.
  void columnsStale();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;  // Save as PNG / CSV (ChartExport)
  bool event(QEvent* event) override;

 private:
  struct Series {
    QString name;
    QColor color;
    Style style = Style::Gauge;
    QString owner;  // a ghost's real series
    std::vector<EnvelopeColumn> columns;
    double max = 0;  // the largest drawn value, for the y axis
    double min = 0;  // the smallest (below 0 only in a difference)
  };
  struct Threshold {
    QString label;
    double value = 0;
    QColor color;
    bool draggable = false;
    double drag_min = 0, drag_max = 0;
  };

  void fitY();
  void assignColumns(Series& s, std::vector<EnvelopeColumn> columns, double scale);
  std::vector<LegendEntry> comparedEntries() const;
  AxisTicks yTicks(int plot_height) const;
  void paintAxes(QPainter& p, const QRect& plot);
  void paintLegend(QPainter& p);
  std::vector<LegendEntry> legendEntries() const;
  static bool ownedBy(Style s) { return isGhost(s) || isCompared(s); }  // drawn for another series
  bool hiddenSeries(const Series& s) const { return hidden_.contains(s.owner.isEmpty() ? s.name : s.owner); }
  int seriesAlpha(const Series& s) const;
  QString withUnit(const QString& value) const { return unit_.isEmpty() ? value : value + QLatin1Char(' ') + unit_; }
  void paintOverlays(QPainter& p, const QRect& plot);
  void paintNowLine(QPainter& p, const QRect& plot);
  void paintBox(QPainter& p, const QRect& plot);
  void paintBand(QPainter& p, const QRect& plot);
  void paintCursor(QPainter& p, const QRect& plot);
  std::optional<int> cursorColumn() const;
  int leftMargin() const;
  QRect computePlotRect() const;
  SimTime timeAt(double x) const;
  Threshold* thresholdNear(int y);
  QString tooltipAt(const QPoint& pos) const;

  static constexpr int kPad = 6;  // around the plot, the legend's entries and labels
  ViewState& view_;
  StaticTextCache text_, bold_text_;  // labels shaped once, not every paint
  QString title_;
  std::vector<Series> series_;
  QSet<QString> hidden_;
  ChartLegend legend_;
  std::vector<Threshold> thresholds_;
  std::vector<BandColumn> band_;
  QString band_legend_;
  QColor band_color_;
  std::vector<Marker> markers_;
  SimTime highlight_from_ = 0, highlight_to_ = 0;
  SimTime hold_until_ = std::numeric_limits<SimTime>::min();
  bool fixed_y_ = false, integer_ = false, signed_y_ = false;
  QString unit_;
  double y_min_ = 0, y_max_ = 1;
  enum class Drag { None, Pan, Threshold, Box } drag_ = Drag::None;
  int box_from_x_ = 0, box_to_x_ = 0;  // a Shift+drag's span, in widget x
  TimeAxisInput axis_input_;
  QString drag_label_;
  mutable QRect plot_cache_;
  mutable std::tuple<QSize, double, double, int> plot_cache_key_{QSize(-1, -1), 0, 0, -1};
  int font_generation_ = 0;
};

}  // namespace kvscope
