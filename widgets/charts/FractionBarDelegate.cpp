#include "widgets/charts/FractionBarDelegate.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kvscope {

int FractionBarDelegate::filledWidth(double fraction) {
  if (!std::isfinite(fraction)) return 0;
  return static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * kBarWidth));
}

void FractionBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  const QString text = opt.text;
  opt.text.clear();
  // The cell's background and focus as the style draws them (without its text: the base class's
  // paint would set it again), then the bar, then the text on it.
  const QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, opt.widget);
  const QRect cell = option.rect.adjusted(4, 3, -4, -3);
  const QRect track(cell.left(), cell.top(), std::min(kBarWidth, cell.width()), cell.height());
  QColor back = option.palette.color(QPalette::Mid);
  back.setAlpha(60);
  painter->fillRect(track, back);
  const double fraction = index.data(Qt::UserRole).toDouble();
  QColor bar = option.palette.color(QPalette::Highlight);
  bar.setAlpha(150);
  painter->fillRect(QRect(track.left(), track.top(), std::min(filledWidth(fraction), track.width()), track.height()),
                    bar);
  painter->setPen(option.palette.color(QPalette::Text));
  painter->drawText(track.adjusted(4, 0, -4, 0), Qt::AlignVCenter | Qt::AlignRight, text);
}

QSize FractionBarDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QSize size = QStyledItemDelegate::sizeHint(option, index);
  size.setWidth(std::max(size.width(), kBarWidth + 8));
  return size;
}

}  // namespace kvscope
