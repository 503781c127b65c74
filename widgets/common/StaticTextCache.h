#pragma once
// Shaped text kept between paints. A chart redraws the same tick labels and legend thirty times a
// second while a run streams; shaping them again each time (HarfBuzz, through QPainter::drawText)
// cost as much as drawing the data did with 64 workers. QStaticText keeps the layout; this keeps
// the QStaticText, per string, for one font.
#include <QFont>
#include <QHash>
#include <QStaticText>
#include <QString>

namespace kvscope {

class StaticTextCache {
 public:
  // `text` laid out in `font`, drawn with QPainter::drawStaticText at its top-left corner.
  const QStaticText& get(const QString& text, const QFont& font) {
    if (font != font_) {  // a font or style change: every layout is stale
      texts_.clear();
      font_ = font;
    }
    if (texts_.size() > kMaxTexts) texts_.clear();  // labels change with the zoom; keep the cache small
    if (const auto found = texts_.constFind(text); found != texts_.constEnd()) return *found;
    QStaticText shaped(text);
    shaped.setTextFormat(Qt::PlainText);
    shaped.prepare(QTransform(), font);
    return *texts_.insert(text, shaped);
  }
  // The width `text` takes in `font` (what QFontMetrics::horizontalAdvance would shape again).
  double width(const QString& text, const QFont& font) { return get(text, font).size().width(); }

 private:
  static constexpr qsizetype kMaxTexts = 512;
  QFont font_;
  QHash<QString, QStaticText> texts_;
};

}  // namespace kvscope
