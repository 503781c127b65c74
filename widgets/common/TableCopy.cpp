#include "widgets/common/TableCopy.h"

#include <QAbstractItemView>
#include <QClipboard>
#include <QGuiApplication>
#include <QHeaderView>
#include <QKeyEvent>
#include <QTableView>

#include <map>
#include <set>

namespace kvscope {

namespace {

class CopyFilter : public QObject {
 public:
  explicit CopyFilter(QAbstractItemView& view) : QObject(&view), view_(view) {}

  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == &view_ && event->type() == QEvent::KeyPress &&
        static_cast<QKeyEvent*>(event)->matches(QKeySequence::Copy)) {
      QGuiApplication::clipboard()->setText(tableCopyText(view_));
      return true;
    }
    return QObject::eventFilter(watched, event);
  }

 private:
  QAbstractItemView& view_;
};

QString cell(const QAbstractItemModel& model, int row, int column) {
  // One line a row: a cell's own line breaks and tabs become spaces.
  return model.data(model.index(row, column), Qt::DisplayRole).toString().simplified();
}

bool columnShown(const QAbstractItemView& view, int column) {
  const auto* table = qobject_cast<const QTableView*>(&view);
  return !table || !table->isColumnHidden(column);
}

}  // namespace

void enableTableCopy(QAbstractItemView& view) { view.installEventFilter(new CopyFilter(view)); }

QString tableCopyText(const QAbstractItemView& view) {
  const QAbstractItemModel* model = view.model();
  if (!model) return {};
  QStringList lines;
  const QModelIndexList selected = view.selectionModel() ? view.selectionModel()->selectedIndexes() : QModelIndexList{};
  if (!selected.isEmpty()) {  // the selection's rows and columns, in the model's order
    std::map<int, std::set<int>> rows;
    std::set<int> columns;
    for (const QModelIndex& i : selected) {
      rows[i.row()].insert(i.column());
      columns.insert(i.column());
    }
    for (const auto& [row, in_row] : rows) {
      QStringList cells;
      for (int column : columns) cells << (in_row.count(column) ? cell(*model, row, column) : QString());
      lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
  }
  QStringList header;
  for (int c = 0; c < model->columnCount(); ++c)
    if (columnShown(view, c)) header << model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString().simplified();
  lines << header.join(QLatin1Char('\t'));
  for (int r = 0; r < model->rowCount(); ++r) {
    QStringList cells;
    for (int c = 0; c < model->columnCount(); ++c)
      if (columnShown(view, c)) cells << cell(*model, r, c);
    lines << cells.join(QLatin1Char('\t'));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace kvscope
