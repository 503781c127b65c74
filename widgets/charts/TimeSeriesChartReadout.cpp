// TimeSeriesChart: what a chart says about its series - the legend and which series it shows,
// how strongly each is drawn, and the values it reads out at the shared cursor and in its tooltip.
// (Its data, axes, painting of the data and mouse handling are in TimeSeriesChart.cpp.)
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "core/telemetry/ComparedRun.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

void TimeSeriesChart::setSeriesHidden(const QString& name, bool hidden) {
  if (hidden ? hidden_.contains(name) : !hidden_.contains(name)) return;
  if (hidden)
    hidden_.insert(name);
  else
    hidden_.remove(name);
  update();
}

// A click shows or hides one series; Ctrl+click shows it alone, or everything again when it already is.
void TimeSeriesChart::toggleSeries(const QString& name, bool isolate) {
  if (!isolate) return setSeriesHidden(name, !isSeriesHidden(name));
  bool alone = !isSeriesHidden(name);
  for (const Series& s : series_)
    if (!ownedBy(s.style) && s.name != name && !isSeriesHidden(s.name)) alone = false;
  for (const Series& s : series_)
    if (!ownedBy(s.style)) setSeriesHidden(s.name, alone ? false : s.name != name);
}

// Real data is never fainter than a forecast: a ghost gets at most half its real series' alpha,
// and a finding's workers stand out (the others, and their ghosts, fade).
int TimeSeriesChart::seriesAlpha(const Series& s) const {
  const QString& real = s.owner.isEmpty() ? s.name : s.owner;
  const bool faded = !view_.highlightedWorkers().isEmpty() && !view_.isHighlighted(real);
  const int real_alpha = faded ? 60 : 255;
  // The compared run's points sit among this run's: fainter, so both clouds read.
  if (s.style == Style::ComparedPoints) return std::min(faded ? real_alpha : 255, 110);
  if (!isGhost(s.style)) return faded ? real_alpha : s.color.alpha();
  const int own = s.color.alpha() == 255 ? 120 : s.color.alpha();
  return std::min(own, real_alpha / 2);
}

void TimeSeriesChart::paintLegend(QPainter& p) {
  const QPalette& pal = palette();
  const QFontMetrics fm = fontMetrics();
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(pal.color(QPalette::Text));
  const QStaticText& title = bold_text_.get(title_, bold);
  p.drawStaticText(QPointF(kPad, 2 + (fm.height() - title.size().height()) / 2), title);
  const int title_end = kPad + static_cast<int>(std::ceil(title.size().width())) + 3 * kPad;
  p.setFont(font());
  auto widthOf = [&](const QString& text) { return static_cast<int>(std::ceil(text_.width(text, font()))); };
  legend_.layout(legendEntries(), title_end, width() - kPad, 2, fm.height(), widthOf);
  QColor muted = pal.color(QPalette::Text);
  muted.setAlpha(110);
  legend_.paint(p, pal.color(QPalette::Text), muted, [&](const QString& text, int right) {
    const QStaticText& shaped = text_.get(text, font());
    p.drawStaticText(QPointF(right - widthOf(text), 2 + (fm.height() - shaped.size().height()) / 2), shaped);
  });
}

// With a run compared, which run is which: "A" solid and "B" dashed, each with its file's name cut to
// fit, before everything else (the full names are in the Compare panel and the window's title).
std::vector<LegendEntry> TimeSeriesChart::comparedEntries() const {
  const ComparedRun* run = view_.comparison();
  if (!run) return {};
  const bool drawn = std::any_of(series_.begin(), series_.end(), [](const Series& s) {
    return isCompared(s.style) &&
           std::any_of(s.columns.begin(), s.columns.end(), [](const EnvelopeColumn& c) { return c.present; });
  });
  if (!drawn) return {};
  const QFontMetrics fm = fontMetrics();
  const int room = fm.horizontalAdvance(QLatin1Char('x')) * 18;
  const auto name = [&](const char* side, const std::string& file) {
    return QStringLiteral("%1: %2").arg(QLatin1String(side),
                                        fm.elidedText(QString::fromStdString(file), Qt::ElideMiddle, room));
  };
  const QColor text = palette().color(QPalette::Text);
  return {{LegendEntry::Kind::Line, name("A", run->name_a), text, {}, false},
          {LegendEntry::Kind::Dash, name("B", run->name_b), text, {}, false}};
}

// Reading order: the compared runs' names, the series, each kind of forecast drawn now ("without the change", "with the
// change"), the thresholds, the band (most of the workers, when there are many).
std::vector<LegendEntry> TimeSeriesChart::legendEntries() const {
  std::vector<LegendEntry> entries = comparedEntries();
  for (const Series& s : series_)
    if (!ownedBy(s.style)) entries.push_back({LegendEntry::Kind::Swatch, s.name, s.color, s.name, hiddenSeries(s)});
  QStringList forecasts;
  for (const Series& s : series_) {
    if (!isGhost(s.style) || hiddenSeries(s)) continue;
    if (std::none_of(s.columns.begin(), s.columns.end(), [](const EnvelopeColumn& c) { return c.present; })) continue;
    const QString text =
        s.owner.isEmpty() || !s.name.startsWith(s.owner) ? s.name : s.name.mid(s.owner.size()).trimmed();
    if (forecasts.contains(text)) continue;
    forecasts << text;
    QColor color = s.color;
    color.setAlpha(seriesAlpha(s));
    entries.push_back({LegendEntry::Kind::Ghost, text, color, {}, false});
  }
  for (const Threshold& t : thresholds_) entries.push_back({LegendEntry::Kind::Dash, t.label, t.color, {}, false});
  if (!band_legend_.isEmpty() && !band_.empty())
    entries.push_back({LegendEntry::Kind::Band, band_legend_, band_color_, {}, false});
  return entries;
}

QString TimeSeriesChart::tooltipAt(const QPoint& pos) const {
  if (legend_.isOnFolded(pos)) return tr("Also drawn: %1").arg(legend_.folded().join(QStringLiteral(", ")));
  if (legend_.seriesAt(pos)) return tr("Click: show or hide this series. Ctrl+click: show it alone.");
  const QRect plot = plotRect();
  if (!plot.contains(pos)) return {};
  const int c = pos.x() - plot.left();
  const ColumnGrid g = grid();
  QString text = QStringLiteral("t = %1 to %2 s")
                     .arg(timeToSeconds(g.columnStart(c)), 0, 'f', 1)
                     .arg(timeToSeconds(g.columnStart(c + 1) - 1), 0, 'f', 1);
  for (const Series& s : series_) {
    if (c >= static_cast<int>(s.columns.size())) continue;
    const EnvelopeColumn& col = s.columns[static_cast<std::size_t>(c)];
    QString value = !col.present ? tr("no data")
                    : col.lo == col.hi
                        ? withUnit(QString::number(col.lo, 'g', 4))
                        : withUnit(QStringLiteral("%1 to %2").arg(col.lo, 0, 'g', 4).arg(col.hi, 0, 'g', 4));
    if (col.present && !col.exact) value += tr(" (rolled up)");
    text += QStringLiteral("\n%1%2: %3").arg(s.name, isGhost(s.style) ? tr(" (preview)") : QString(), value);
  }
  if (c < static_cast<int>(band_.size()) && band_[static_cast<std::size_t>(c)].present) {
    const BandColumn& b = band_[static_cast<std::size_t>(c)];
    text += tr("\n%1 other workers: min %2, median %3, max %4")
                .arg(b.workers)
                .arg(b.lo, 0, 'g', 4)
                .arg(b.median, 0, 'g', 4)
                .arg(b.hi, 0, 'g', 4);
  }
  return text;
}

std::optional<int> TimeSeriesChart::cursorColumn() const {
  const std::optional<SimTime> t = view_.cursorTime();
  if (!t || *t < view_.from() || *t >= view_.to()) return std::nullopt;
  const int c = grid().columnOf(*t);
  if (c < 0 || c >= plotColumns()) return std::nullopt;
  return c;
}

QStringList TimeSeriesChart::cursorReadout() const {
  QStringList lines;
  const std::optional<int> c = cursorColumn();
  if (!c) return lines;
  const auto at = static_cast<std::size_t>(*c);
  for (const Series& s : series_) {
    if (at >= s.columns.size() || !s.columns[at].present || hiddenSeries(s)) continue;
    const EnvelopeColumn& col = s.columns[at];
    const QString value =
        withUnit(col.lo == col.hi ? QString::number(col.hi, 'g', 4)
                                  : QStringLiteral("%1..%2").arg(col.lo, 0, 'g', 4).arg(col.hi, 0, 'g', 4));
    lines << QStringLiteral("%1%2: %3").arg(s.name, isGhost(s.style) ? tr(" (preview)") : QString(), value);
  }
  if (at < band_.size() && band_[at].present)
    lines << tr("%1 others: median %2").arg(band_[at].workers).arg(withUnit(QString::number(band_[at].median, 'g', 4)));
  return lines;
}

// The shared cursor: a line at the hovered time (whichever time view the pointer is in) and, beside
// it, each series' value there, so one look across the charts reads every gauge at that moment.
void TimeSeriesChart::paintCursor(QPainter& p, const QRect& plot) {
  const std::optional<int> c = cursorColumn();
  if (!c) return;
  const int x = plot.left() + *c;
  QColor line = palette().color(QPalette::Text);
  line.setAlpha(110);
  p.setPen(QPen(line, 1));
  p.drawLine(x, plot.top(), x, plot.bottom());
  const QStringList lines = cursorReadout();
  if (lines.isEmpty()) return;
  const QFontMetrics fm = fontMetrics();
  int width = 0;
  for (const QString& l : lines) width = std::max(width, fm.horizontalAdvance(l));
  const int rows = std::min<int>(static_cast<int>(lines.size()), std::max(1, (plot.height() - 4) / fm.height()));
  QRect box(x + 6, plot.top() + 2, width + 8, rows * fm.height() + 4);
  if (box.right() > plot.right()) box.moveRight(x - 6);  // near the right edge: on the line's left
  QColor back = palette().color(QPalette::ToolTipBase);
  back.setAlpha(220);
  p.fillRect(box, back);
  p.setPen(palette().color(QPalette::ToolTipText));
  for (int i = 0; i < rows; ++i)
    p.drawText(QRect(box.left() + 4, box.top() + 2 + i * fm.height(), width, fm.height()), Qt::AlignLeft,
               lines[static_cast<qsizetype>(i)]);
}

}  // namespace kvscope
