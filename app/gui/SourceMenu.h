#pragma once
// The File menu's source choices: New simulation..., Connect..., Open recording..., Watch live
// cluster..., recent files
// (kept in QSettings). Every choice goes through makeSource(), so errors read the same as on the
// command line.
#include <QObject>

class QMenu;

namespace kvscope {

class MainWindow;
struct SourceSpec;

class SourceMenu : public QObject {
  Q_OBJECT
 public:
  SourceMenu(MainWindow& window, QMenu& file);

  // Opens `spec` in the window; shows the error and keeps the current source on failure.
  bool open(const SourceSpec& spec);

 private:
  void newSimulation();
  void connectToServer();
  void openRecording();
  void watchLiveCluster();
  void remember(const SourceSpec& spec);
  void rebuildRecent();

  MainWindow& window_;
  QMenu* recent_;
};

}  // namespace kvscope
