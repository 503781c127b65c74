#include "app/gui/CompareActions.h"

#include <QAction>
#include <QFileDialog>
#include <QInputDialog>
#include <QMainWindow>
#include <QMenu>
#include <QStatusBar>
#include <QThread>
#include <QWidget>

#include <cmath>

#include "app/gui/PanelDocks.h"
#include "app/gui/WarningBox.h"
#include "backend/recording/ComparedRunLoader.h"
#include "backend/source/RecordingSource.h"
#include "core/model/Error.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

CompareActions::CompareActions(QWidget& window, RunSession& session, ViewState& view, PanelDocks& docks)
    : QObject(&window), window_(window), session_(session), view_(view), docks_(docks) {
  connect(&session_, &RunSession::sourceChanged, this, &CompareActions::sourceChanged);
  connect(this, &CompareActions::failed, this,
          [this](const QString& error) { showWarning(window_, tr("Compare runs"), error); });
}

CompareActions::~CompareActions() {
  if (loader_) loader_->wait();  // it writes into state this object owns
}

bool CompareActions::openRecording(std::string* path, QString* error) const {
  const auto* recording = dynamic_cast<const RecordingSource*>(session_.source());
  if (recording) {
    *path = recording->path();
    return true;
  }
  if (error) *error = tr("Runs are compared as recordings: open one first (File > Open recording).");
  return false;
}

bool CompareActions::compareNow(const std::string& recording, QString* error, const ComparedRunContext& context) {
  std::string a;
  if (!openRecording(&a, error)) return false;
  try {
    apply(loadComparedRun(a, recording, context));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
}

void CompareActions::compareLater(const std::string& recording, const ComparedRunContext& context) {
  std::string a;
  QString error;
  if (loader_) return;
  if (!openRecording(&a, &error)) {
    emit failed(error);
    return;
  }
  auto result = std::make_shared<ComparedRunLoad>();
  auto message = std::make_shared<std::string>();
  loader_ = QThread::create([a, recording, context, result, message] {
    try {
      *result = loadComparedRun(a, recording, context);
    } catch (const std::exception& e) {
      *message = e.what();
    }
  });
  connect(loader_, &QThread::finished, this, [this, result, message] {
    loader_->deleteLater();
    loader_ = nullptr;
    if (!message->empty())
      emit failed(QString::fromStdString(*message));
    else
      apply(std::move(*result));
  });
  showStatus(tr("Reading %1 to compare...").arg(QString::fromStdString(recording)));
  loader_->start();
}

void CompareActions::apply(ComparedRunLoad load) {
  showStatus(load.warnings.empty() ? QString() : QString::fromStdString(load.warnings.front()));
  view_.setComparison(std::move(load.run));
  if (stop_) stop_->setEnabled(true);
  if (offset_) offset_->setEnabled(true);
  docks_.raisePanel("compare");
  emit compared();
}

void CompareActions::showStatus(const QString& text) {
  if (auto* main = qobject_cast<QMainWindow*>(&window_)) main->statusBar()->showMessage(text, 10'000);
}

void CompareActions::setOffsetSeconds(double seconds) { view_.setComparisonOffset(secondsToTime(seconds)); }

void CompareActions::stopComparing() {
  view_.setComparison(nullptr);
  view_.setComparisonOffset(0);
  if (stop_) stop_->setEnabled(false);
  if (offset_) offset_->setEnabled(false);
}

// Another run opened: the comparison was of the one before (its A summary is that run's).
void CompareActions::sourceChanged() {
  if (view_.comparison()) stopComparing();
}

void CompareActions::addToFile(QMenu& file) {
  file.addAction(tr("Co&mpare with..."), this, [this] {
    const QString path = QFileDialog::getOpenFileName(&window_, tr("Compare with recording"), QString(),
                                                      tr("KVScope recordings (*.kvrec);;All files (*)"));
    if (!path.isEmpty()) compareLater(path.toStdString());
  });
  stop_ = file.addAction(tr("Stop comparing"), this, &CompareActions::stopComparing);
  stop_->setEnabled(view_.comparison() != nullptr);
}

void CompareActions::addToView(QMenu& view) {
  offset_ = view.addAction(tr("Comparison &offset..."), this, [this] {
    bool ok = false;
    const double seconds = QInputDialog::getDouble(&window_, tr("Comparison offset"),
                                                   tr("Draw run B this many seconds later (negative: earlier):"),
                                                   timeToSeconds(view_.comparisonOffset()), -1e7, 1e7, 1, &ok);
    if (ok) setOffsetSeconds(seconds);
  });
  offset_->setEnabled(view_.comparison() != nullptr);
}

}  // namespace kvscope
