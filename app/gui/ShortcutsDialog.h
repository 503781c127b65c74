#pragma once
// Help > Keyboard shortcuts ("?"): every menu action that has a shortcut, read from the menu bar
// (so the list cannot drift from the actions), then the mouse and key gestures of the panels.
#include <QDialog>
#include <QList>
#include <QPair>
#include <QString>

class QMenuBar;

namespace kvscope {

class ShortcutsDialog : public QDialog {
  Q_OBJECT
 public:
  ShortcutsDialog(const QMenuBar& menus, QWidget* parent);
  // (what, keys) rows as shown: the menus' actions first, then the gestures.
  static QList<QPair<QString, QString>> rows(const QMenuBar& menus);
};

}  // namespace kvscope
