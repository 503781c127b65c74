#pragma once
// `kvscope --screenshot FILE.png --run-for SECONDS [--summary FILE.json]`: lets the run reach that
// simulated time (as fast as the source allows), renders the whole window once more and saves it,
// then quits with 0, or 1 with a message when the time is never reached or the file cannot be
// written. The summary is what the window shows, as JSON: the diagnosis panel's findings and the
// decode-load panel's worker states, so scripts check the window's own conclusions.
#include <QObject>
#include <QString>

#include "core/model/Ids.h"

namespace kvscope {

class MainWindow;

class ScreenshotRunner : public QObject {
  Q_OBJECT
 public:
  ScreenshotRunner(MainWindow& window, QString path, double run_for_s, int wall_timeout_s = 300);
  void start();
  void setSummaryPath(QString path) { summary_path_ = std::move(path); }
  // What the window shows now (findings, workers), as written to the summary file.
  static QByteArray summaryJson(MainWindow& window);

 private:
  void onFrame();
  void finish(int code, const QString& message);

  MainWindow& window_;
  QString path_;
  QString summary_path_;
  SimTime target_;
  int wall_timeout_s_;
  bool done_ = false;
};

}  // namespace kvscope
