#pragma once
// A table cell that holds a fraction (its Qt::UserRole, 0..1) drawn as a bar behind its text, as
// Grafana's bar-gauge cells do: the worker strip's KV use reads at a glance across 64 rows.
#include <QStyledItemDelegate>

namespace kvscope {

class FractionBarDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  static constexpr int kBarWidth = 120;  // the bar's full width; the cell's text sits on it

  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  // The bar's filled width for `fraction` (clamped to 0..1), for tests.
  static int filledWidth(double fraction);
};

}  // namespace kvscope
