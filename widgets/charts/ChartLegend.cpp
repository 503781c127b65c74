#include "widgets/charts/ChartLegend.h"

#include <QPainter>

namespace kvscope {

namespace {
constexpr int kGap = 12;  // between two entries
}  // namespace

void ChartLegend::layout(std::vector<LegendEntry> entries, int left, int right, int top, int height,
                         const WidthOf& widthOf) {
  placed_.clear();
  folded_.clear();
  folded_rect_ = {};
  row_ = QRect(left, top, std::max(0, right - left), height);
  top_ = top;
  height_ = height;
  std::vector<int> widths;
  int total = 0;
  for (const LegendEntry& e : entries) {
    widths.push_back(kSwatch + widthOf(e.text));
    total += widths.back() + kGap;
  }
  const int available = right - left;
  std::size_t kept = entries.size();
  int used = total;
  if (total > available) {  // the longest prefix that fits beside the "+N" of the rest
    kept = 0;
    used = 0;
    const auto foldWidth = [&](std::size_t rest) { return widthOf(QStringLiteral("+%1").arg(rest)) + kGap; };
    while (kept < entries.size() && used + widths[kept] + kGap + foldWidth(entries.size() - kept - 1) <= available)
      used += widths[kept++] + kGap;
  }
  for (std::size_t i = kept; i < entries.size(); ++i) folded_ << entries[i].text;
  const QString fold = folded_.isEmpty() ? QString() : QStringLiteral("+%1").arg(folded_.size());
  int x = right - used - (fold.isEmpty() ? 0 : widthOf(fold) + kGap) + kGap;
  for (std::size_t i = 0; i < kept; ++i) {
    placed_.push_back({std::move(entries[i]), QRect(x, top, widths[i], height)});
    x += widths[i] + kGap;
  }
  if (!fold.isEmpty()) folded_rect_ = QRect(x, top, widthOf(fold), height);
}

void ChartLegend::paint(QPainter& p, const QColor& text_color, const QColor& muted,
                        const std::function<void(const QString&, int)>& text) const {
  const int mid = top_ + height_ / 2;
  for (const Placed& placed : placed_) {
    const LegendEntry& e = placed.entry;
    const int x = placed.rect.left();
    switch (e.kind) {
      case LegendEntry::Kind::Swatch:
        if (e.hidden) {
          p.setPen(muted);
          p.drawRect(QRect(x, mid - 4, 8, 8));
        } else {
          p.fillRect(QRect(x, mid - 4, 9, 9), e.color);
        }
        break;
      case LegendEntry::Kind::Ghost:  // a forecast: its own faint fill, with a thin edge to find it by
        p.fillRect(QRect(x, mid - 4, 12, 9), e.color);
        p.setPen(QPen(e.color, 1, Qt::DotLine));
        p.drawRect(QRect(x, mid - 4, 11, 8));
        break;
      case LegendEntry::Kind::Dash:
        p.setPen(QPen(e.color, 1, Qt::DashLine));
        p.drawLine(x, mid, x + 12, mid);
        break;
      case LegendEntry::Kind::Line:  // a compared pair's solid side
        p.setPen(QPen(e.color, 1));
        p.drawLine(x, mid, x + 12, mid);
        break;
      case LegendEntry::Kind::Band: {
        QColor fill = e.color;
        fill.setAlpha(90);
        p.fillRect(QRect(x, mid - 4, 12, 9), fill);
        p.fillRect(QRect(x, mid, 12, 1), e.color);
        break;
      }
    }
    p.setPen(e.hidden ? muted : text_color);
    text(e.text, placed.rect.right() + 1);
  }
  if (!folded_.isEmpty()) {
    p.setPen(text_color);
    text(QStringLiteral("+%1").arg(folded_.size()), folded_rect_.right() + 1);
  }
}

std::optional<QString> ChartLegend::seriesAt(const QPoint& pos) const {
  for (const Placed& placed : placed_)
    if (!placed.entry.series.isEmpty() && placed.rect.contains(pos)) return placed.entry.series;
  return std::nullopt;
}

QStringList ChartLegend::shownTexts() const {
  QStringList texts;
  for (const Placed& placed : placed_) texts << placed.entry.text;
  if (!folded_.isEmpty()) texts << QStringLiteral("+%1").arg(folded_.size());
  return texts;
}

}  // namespace kvscope
