#pragma once
// A chart's legend row: the entries laid out right-aligned after the title, none ever silently
// dropped (those that do not fit become one "+N" entry whose tooltip names them), and hit-testing
// so a click toggles a series and Ctrl+click isolates it, as in Grafana and PlotJuggler.
#include <QColor>
#include <QRect>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

class QPainter;

namespace kvscope {

struct LegendEntry {
  enum class Kind { Swatch, Ghost, Dash, Line, Band };
  Kind kind = Kind::Swatch;
  QString text;
  QColor color;
  QString series;  // the series a click toggles; empty for thresholds, the band and the ghosts
  bool hidden = false;
};

class ChartLegend {
 public:
  using WidthOf = std::function<int(const QString&)>;

  // Places `entries` (in reading order) between `left` and `right` on a row `height` high at `top`.
  // When they do not all fit, the first ones in `entries` are kept (series before thresholds
  // before the band) and the rest fold into "+N".
  void layout(std::vector<LegendEntry> entries, int left, int right, int top, int height, const WidthOf& widthOf);
  // Draws what layout placed; `text(label, right_edge)` draws a label ending at right_edge.
  void paint(QPainter& p, const QColor& text_color, const QColor& muted,
             const std::function<void(const QString&, int)>& text) const;

  // The series whose entry is at `pos` (none for other entries or empty space).
  std::optional<QString> seriesAt(const QPoint& pos) const;
  bool contains(const QPoint& pos) const { return row_.contains(pos); }
  // The entries folded into "+N" (empty when all fit), and whether `pos` is on the "+N".
  const QStringList& folded() const { return folded_; }
  bool isOnFolded(const QPoint& pos) const { return folded_rect_.contains(pos); }
  // What is drawn, in order, for tests: the entries' texts, "+N" last when some fold.
  QStringList shownTexts() const;

 private:
  struct Placed {
    LegendEntry entry;
    QRect rect;  // swatch and text
  };
  static constexpr int kSwatch = 16;
  std::vector<Placed> placed_;
  QStringList folded_;
  QRect folded_rect_, row_;
  int top_ = 0, height_ = 0;
};

}  // namespace kvscope
