#pragma once
// The event timeline's canvas (panel 3): a row per decode worker, prefill worker and
// Mooncake link, simulated time across, over ViewState's shared range, one glyph per kind.
// It paints only the discrete events inside the visible range, and folds every event that lands in
// the same few pixels of a row into one glyph (the cell's most severe event, its density as a
// tint), so a storm of 200K evictions costs at most a glyph per row per bin.
// Like every panel it reads the TelemetryStore it was last given; the store outlives the panels
// (the main window owns both), which lets zoom, pan and filters redraw while a replay is paused.
#include <QHash>
#include <QPixmap>
#include <QWidget>

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "widgets/common/StaticTextCache.h"
#include "widgets/common/TimeAxisInput.h"
#include "widgets/timeline/TimelineKind.h"
#include "widgets/timeline/TimelineRowGroups.h"

namespace kvscope {

class ViewState;

class EventTimelineView : public QWidget {
  Q_OBJECT
 public:
  // Bins are this many pixels wide: events of one row closer than that share a glyph.
  static constexpr int kBinPx = 3;

  struct FrameStats {
    long events_in_range = 0;  // discrete events within [from, to]
    long events_shown = 0;     // of those, passing the kind filter; each is folded into a glyph or a line
    std::array<long, kTimelineKinds> shown_by_kind{};
    int glyphs = 0;  // row glyphs painted
    int lines = 0;   // full-height knob/policy lines painted
    int notes = 0;   // the operator's notes in range (ViewState::notes), a line and a flag each
  };

  explicit EventTimelineView(ViewState& view, QWidget* parent = nullptr);

  void setStore(const TelemetryStore& store);
  void setKindVisible(TimelineKind kind, bool visible);
  bool kindVisible(TimelineKind kind) const { return visible_[static_cast<std::size_t>(kind)]; }

  // The event drawn under `pos` (a cell's most severe one when several share it), if any.
  std::optional<Event> hitTest(QPoint pos) const;
  QString toolTipAt(QPoint pos) const;

  QRect plotRect() const;
  int rowCount() const { return static_cast<int>(rows_.size()); }
  int xForTime(SimTime t) const;
  SimTime timeForX(double x) const;
  int rowCenterY(int row) const;
  std::uint64_t highlightedSeq() const { return highlighted_seq_; }
  // Many workers: rows folded into groups (a click on a group's label opens or closes it).
  const TimelineRowGroups& rowGroups() const { return groups_; }
  const std::vector<std::string>& rowNames() const { return rows_; }
  // Opens or closes the group shown at `row`; false when that row is not a group.
  bool toggleGroup(int row);

  // One glyph per row and bin of kBinPx plot columns (the charts' ColumnGrid columns): how many
  // events it folds and the most severe one's kind.
  struct DrawnGlyph {
    int row = 0;
    int bin = 0;
    long count = 0;
    TimelineKind kind = TimelineKind::Eviction;
  };
  std::vector<DrawnGlyph> drawnGlyphs() const;

  // What the last paint drew: glyphs are bounded by rows x bins, whatever the event count.
  const FrameStats& lastFrame() const { return last_frame_; }
  int glyphsPaintedLastFrame() const { return last_frame_.glyphs + last_frame_.lines; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void eventClicked(const kvscope::Event& event);

 protected:
  bool event(QEvent* e) override;
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void changeEvent(QEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void leaveEvent(QEvent* e) override;

 private:
  // A discrete event as the layout needs it, classified once when it arrives: the layout then
  // streams 16 bytes per event instead of visiting each Event's variant every frame.
  struct Mark {
    SimTime time = 0;
    std::int32_t tokens_freed = 0;
    std::int16_t row = -1;       // -1: spans all rows (knob and policy changes)
    std::int16_t also_row = -1;  // a second row (a seed's prefill worker), -1 when none
    std::int8_t kind = -1;       // -1: not drawn
  };
  struct Cell {  // the events of one row falling in one bin
    int row = 0;
    int bin = 0;
    long count = 0;
    TimelineKind kind = TimelineKind::Eviction;  // of the representative
    std::size_t representative = 0;              // index into discreteEvents(): the most severe
    std::size_t first = 0, last = 0;             // index span of the events folded in
    std::int64_t magnitude = 0;                  // tokens freed, for an eviction representative
    SimTime time = 0;                            // the representative's (painting never looks it up)
    int severity = 0;                            // timelineKindSeverity(kind), kept for the layout loop
  };
  struct Line {  // knob and policy changes in one pixel column
    int x = 0;
    long count = 0;
    TimelineKind kind = TimelineKind::KnobChange;
    std::size_t representative = 0;
    std::size_t first = 0, last = 0;
  };
  struct Layout {
    bool valid = false;
    std::uint64_t revision = 0;
    std::vector<Cell> cells;
    std::vector<Line> lines;
    FrameStats stats;
  };
  struct Hit {
    bool line = false;
    std::size_t item = 0;  // into layout_.cells or layout_.lines
  };

  void invalidate();
  void syncMarks() const;
  void ensureLayout() const;
  void onEventSelected(std::uint64_t seq, SimTime time);
  std::optional<Hit> hitItem(QPoint pos) const;
  int rowAt(int y) const;
  // Text metrics change only with the font or the row names; asking QFontMetrics per glyph was
  // most of a crowded frame's cost.
  void measureText();
  // The rows as the groups now show them (a group folded or opened, the run's rows changed).
  void takeRows();
  int labelWidth() const { return label_width_; }
  int axisHeight() const { return axis_height_; }
  int minRowHeight() const { return min_row_height_; }
  int rowHeight() const;
  qreal glyphRadius(TimelineKind kind, std::int64_t magnitude) const;
  QPointF glyphCentre(const Cell& c, const QRect& plot) const;
  const QPixmap& sprite(TimelineKind kind, qreal radius) const;
  std::optional<std::size_t> indexOfSeq(std::uint64_t seq, SimTime time) const;
  QString aggregateSummary(int row, std::size_t first, std::size_t last) const;
  void paintAxis(QPainter& p, const QRect& plot) const;
  void paintRows(QPainter& p, const QRect& plot) const;
  void paintHighlight(QPainter& p, const QRect& plot) const;
  void paintCursor(QPainter& p, const QRect& plot) const;
  void paintNotes(QPainter& p, const QRect& plot);

  ViewState& view_;
  const TelemetryStore* store_ = nullptr;
  TimelineRowGroups groups_;
  std::vector<std::string> rows_;  // as shown: groups_.names()
  std::vector<int> group_starts_;  // rows where the prefill and link groups begin
  int label_width_ = 0, axis_height_ = 0, min_row_height_ = 0;
  std::array<bool, kTimelineKinds> visible_;
  std::uint64_t highlighted_seq_ = 0;
  SimTime highlighted_time_ = -1;

  // marks_[i] describes discreteEvents()[i]; both drop their oldest together.
  mutable std::deque<Mark> marks_;
  mutable const TelemetryStore* marks_store_ = nullptr;
  mutable std::uint64_t marks_first_ = 0;  // droppedEvents() when marks_.front() was the store's first
  mutable std::uint64_t marks_last_seq_ = 0;
  mutable Layout layout_;
  // Glyphs pre-rendered per kind and half-pixel radius: blitting beats antialiased paths per cell.
  mutable QHash<int, QPixmap> sprites_;
  mutable StaticTextCache text_, bold_text_;  // row names and axis labels, shaped once
  FrameStats last_frame_;

  // Wheel zoom, drag pan and the shared cursor, as every time view does them. A press becomes a
  // pan once it moves past the drag distance; otherwise it is a click.
  TimeAxisInput axis_input_;
};

}  // namespace kvscope
