#include "app/gui/ShortcutsDialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QTableWidget>
#include <QVBoxLayout>

namespace kvscope {

namespace {

void collect(const QMenu& menu, const QString& path, QList<QPair<QString, QString>>& rows) {
  for (QAction* a : menu.actions()) {
    if (a->menu()) {
      collect(*a->menu(), path + QStringLiteral(" > ") + a->menu()->title().remove(QLatin1Char('&')), rows);
      continue;
    }
    if (a->shortcuts().isEmpty()) continue;
    QStringList keys;
    for (const QKeySequence& k : a->shortcuts()) keys << k.toString(QKeySequence::NativeText);
    rows.append({path + QStringLiteral(" > ") + a->text().remove(QLatin1Char('&')), keys.join(QStringLiteral(", "))});
  }
}

}  // namespace

QList<QPair<QString, QString>> ShortcutsDialog::rows(const QMenuBar& menus) {
  QList<QPair<QString, QString>> rows;
  for (QAction* a : menus.actions())
    if (a->menu()) collect(*a->menu(), a->menu()->title().remove(QLatin1Char('&')), rows);
  const QList<QPair<QString, QString>> gestures = {
      {tr("Zoom the time axis (charts and timeline alike)"), tr("Mouse wheel")},
      {tr("Pan the time axis"), tr("Drag")},
      {tr("Zoom to a span (View > Undo zoom goes back)"), tr("Shift+drag on a chart")},
      {tr("Back to the live edge"), tr("Double-click a chart or the timeline")},
      {tr("Show or hide a series / show it alone"), tr("Click / Ctrl+click its legend entry")},
      {tr("Set rho or the session soft cap"), tr("Drag its dashed line on the KV pool chart")},
      {tr("Preview a knob's edit (Apply applies)"), tr("Enter in the knob's field")},
      {tr("Leave a knob field / deselect a finding"), tr("Esc")},
      {tr("Edit a slider with the wheel"), tr("Click the slider first (the wheel scrolls the list)")},
  };
  rows.append(gestures);
  return rows;
}

ShortcutsDialog::ShortcutsDialog(const QMenuBar& menus, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Keyboard shortcuts"));
  const auto entries = rows(menus);
  auto* table = new QTableWidget(static_cast<int>(entries.size()), 2, this);
  table->setHorizontalHeaderLabels({tr("What"), tr("Keys")});
  table->verticalHeader()->hide();
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  for (int r = 0; r < static_cast<int>(entries.size()); ++r) {
    table->setItem(r, 0, new QTableWidgetItem(entries[r].first));
    table->setItem(r, 1, new QTableWidgetItem(entries[r].second));
  }
  table->resizeColumnsToContents();
  table->horizontalHeader()->setStretchLastSection(true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(table);
  layout->addWidget(buttons);
  resize(std::min(900, table->horizontalHeader()->length() + 60), 520);
}

}  // namespace kvscope
