#include "app/gui/TwinRunActions.h"

#include <QAction>
#include <QMenu>
#include <QThread>
#include <QWidget>

#include <filesystem>
#include <memory>

#include "app/gui/CompareActions.h"
#include "app/gui/WarningBox.h"
#include "backend/recording/RecordingPlayer.h"
#include "widgets/runs/CounterfactualDialog.h"

namespace kvscope {

namespace {
// A file name from a description: letters, digits and . _ = - kept, the rest '_'.
std::string fileSafe(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '=' && c != '-') c = '_';
  return text;
}
}  // namespace

TwinRunActions::TwinRunActions(QWidget& window, CompareActions& compare)
    : QObject(&window), window_(window), compare_(compare) {
  connect(this, &TwinRunActions::failed, this,
          [this](const QString& error) { showWarning(window_, tr("Twin"), error); });
}

TwinRunActions::~TwinRunActions() {
  if (worker_) worker_->wait();  // it writes into this session's folder
}

void TwinRunActions::start(const std::optional<TwinReplaySpec>& counterfactual) {
  std::string recording;
  QString error;
  if (running()) return;
  if (!compare_.openRecording(&recording, &error)) {
    emit failed(error);
    return;
  }
  if (!dir_.isValid()) {
    emit failed(tr("No folder for the twin's recordings: %1").arg(dir_.errorString()));
    return;
  }
  const std::string stem = std::filesystem::path(recording).stem().string();
  const std::string tag = std::to_string(++runs_);
  TwinReplaySpec replay;
  replay.recording = recording;
  const std::string replay_path =
      dir_.filePath(QString::fromStdString("twin-" + tag + "-" + stem + ".kvrec")).toStdString();
  std::optional<TwinReplaySpec> other = counterfactual;
  std::string other_path;
  if (other) {
    other->recording = recording;
    replay.scenario = other->scenario;  // the same cluster for both
    other_path = dir_.filePath(QString::fromStdString("twin-" + tag + "-" + stem + "-under-" +
                                                      fileSafe(describeTwinReplay(*other)) + ".kvrec"))
                     .toStdString();
  }
  struct Outcome {
    std::optional<TwinReplayResult> replay, other;
    std::string error;
  };
  auto outcome = std::make_shared<Outcome>();
  const int runs = other ? 2 : 1;
  auto progress = [this, runs](int run, double fraction) {
    const double done = (run + fraction) / runs;
    QMetaObject::invokeMethod(
        this, [this, done] { compare_.showStatus(tr("Twin on this run's traffic: %1 %").arg(done * 100, 0, 'f', 0)); },
        Qt::QueuedConnection);
  };
  worker_ = QThread::create([=] {
    try {
      outcome->replay = runTwinReplay(replay, replay_path, [&](double f) { progress(0, f); });
      if (other) outcome->other = runTwinReplay(*other, other_path, [&](double f) { progress(1, f); });
    } catch (const std::exception& e) {
      outcome->error = e.what();
    }
  });
  const std::string change = other ? describeTwinReplay(*other) : std::string();
  connect(worker_, &QThread::finished, this, [this, outcome, replay_path, other_path, change] {
    worker_->deleteLater();
    worker_ = nullptr;
    if (!outcome->error.empty()) {
      emit failed(QString::fromStdString(outcome->error));
      return;
    }
    const TwinReplayResult& replayed = *outcome->replay;
    ComparedRunContext context;
    if (outcome->other) {
      context.b_label = "the twin under " + change;
      context.base = replayed.summary;
      context.base_label = "twin, as recorded (" + replayed.policy + ")";
    } else {
      context.b_label = "the twin's replay (" + replayed.policy + " on " + replayed.scenario + "'s cluster)";
    }
    for (const std::string& note : (outcome->other ? outcome->other : outcome->replay)->notes)
      context.b_label += "; " + note;
    compare_.compareLater(outcome->other ? other_path : replay_path, context);
    emit finished();
  });
  compare_.showStatus(tr("Twin on this run's traffic..."));
  worker_->start();
}

void TwinRunActions::askForCounterfactual() {
  std::string recording;
  QString error;
  if (!compare_.openRecording(&recording, &error)) {
    emit failed(error);
    return;
  }
  RunStarted recorded;
  try {
    recorded = RecordingPlayer(recording).run();
  } catch (const std::exception& e) {
    emit failed(QString::fromStdString(e.what()));
    return;
  }
  CounterfactualDialog dialog(QString::fromStdString(std::filesystem::path(recording).filename().string()),
                              QString::fromStdString(recorded.scenario), QString::fromStdString(recorded.policy),
                              &window_);
  if (dialog.exec() != QDialog::Accepted) return;
  const std::optional<Counterfactual> c = dialog.counterfactual(nullptr);
  if (!c) return;
  TwinReplaySpec spec;
  spec.scenario = c->scenario;
  spec.policy = c->policy;
  spec.knobs = c->knobs;
  spec.seed = c->seed;
  start(spec);
}

void TwinRunActions::addTo(QMenu& file) {
  file.addAction(tr("&Twin vs this run"), this, [this] { start(std::nullopt); });
  file.addAction(tr("Replay this run &under..."), this, &TwinRunActions::askForCounterfactual);
}

}  // namespace kvscope
