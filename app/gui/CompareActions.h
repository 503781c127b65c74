#pragma once
// File > Compare with... (and `kvscope --compare A B`): a second recording drawn beside the open
// one. B is read whole on a worker thread (ComparedRunLoader) and handed to ViewState, from which
// every chart draws it dashed and the Compare runs panel tabulates both; View > Comparison offset
// shifts B on the time axis; File > Stop comparing drops it, as does opening another run.
#include <QObject>
#include <QString>

#include <memory>
#include <string>

#include "backend/recording/ComparedRunLoader.h"

class QAction;
class QMenu;
class QThread;
class QWidget;

namespace kvscope {

class PanelDocks;
class RunSession;
class ViewState;

class CompareActions : public QObject {
  Q_OBJECT
 public:
  CompareActions(QWidget& window, RunSession& session, ViewState& view, PanelDocks& docks);
  ~CompareActions() override;
  void addToFile(QMenu& file);
  void addToView(QMenu& view);

  // Compares the open recording with `recording` now, in this thread (the command line, tests);
  // false with `error` when nothing recorded is open or a file cannot be read.
  bool compareNow(const std::string& recording, QString* error, const ComparedRunContext& context = {});
  // Starts reading `recording` on a worker thread; compared() when done, failed() when not.
  void compareLater(const std::string& recording, const ComparedRunContext& context = {});
  // The open recording's path; false with `error` when what is open is no recording.
  bool openRecording(std::string* path, QString* error) const;
  bool loading() const { return loader_ != nullptr; }
  void setOffsetSeconds(double seconds);
  void stopComparing();
  void showStatus(const QString& text);  // in the window's status bar, for a while

 signals:
  void compared();
  void failed(const QString& error);

 private:
  void apply(ComparedRunLoad load);
  void sourceChanged();

  QWidget& window_;
  RunSession& session_;
  ViewState& view_;
  PanelDocks& docks_;
  QThread* loader_ = nullptr;
  QAction* stop_ = nullptr;
  QAction* offset_ = nullptr;
};

}  // namespace kvscope
