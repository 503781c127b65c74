#pragma once
// File > Twin vs this run, and File > Replay this run under...: the twin on the open recording's own
// traffic (TwinReplay), recorded to a file of this session's and drawn beside the run by
// CompareActions. "Twin vs this run" replays it as recorded (the twin's fidelity on this cluster,
// this traffic); "Replay this run under..." runs another policy or knobs, and the replay as recorded
// as its baseline, so the Compare runs panel can tell the policy's effect from the twin's error.
#include <QObject>
#include <QString>
#include <QTemporaryDir>

#include <optional>
#include <string>

#include "backend/recording/TwinReplay.h"

class QMenu;
class QThread;
class QWidget;

namespace kvscope {

class CompareActions;

class TwinRunActions : public QObject {
  Q_OBJECT
 public:
  TwinRunActions(QWidget& window, CompareActions& compare);
  ~TwinRunActions() override;
  void addTo(QMenu& file);

  // Starts the twin on the open recording: as recorded (`counterfactual` empty) or under the
  // changes in `counterfactual`, with the recorded run as its baseline. finished() once B is
  // compared; failed() with the reason when it cannot run.
  void start(const std::optional<TwinReplaySpec>& counterfactual);
  bool running() const { return worker_ != nullptr; }

 signals:
  void finished();
  void failed(const QString& error);

 private:
  void askForCounterfactual();

  QWidget& window_;
  CompareActions& compare_;
  QTemporaryDir dir_;  // the twin's recordings, for this session
  QThread* worker_ = nullptr;
  int runs_ = 0;  // names the files apart
};

}  // namespace kvscope
