#include "gui/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

#include "ViewState.h"
#include "gui/ExportActions.h"
#include "gui/PanelDocks.h"
#include "gui/RunSession.h"
#include "gui/RunsDock.h"
#include "gui/SourceFactory.h"
#include "gui/SourceMenu.h"
#include "gui/SweepWindow.h"

namespace kvscope {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      view_(new ViewState(this)),
      session_(new RunSession(this)),
      status_(new QLabel(this)),
      counters_(new QLabel(this)) {
  setWindowTitle("KVScope");
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(counters_);
  buildMenus();
  connect(session_, &RunSession::frame, this, &MainWindow::onFrame);
  connect(session_, &RunSession::sourceChanged, this, [this] {
    view_->setFollowLive(true);
    docks_->setSource(session_->source());
    updateStatus();
  });
  connect(session_, &RunSession::sourceFailed, this,
          [this](const QString& message) { QMessageBox::warning(this, tr("Source failed"), message); });
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  QMenu* view = menuBar()->addMenu(tr("&View"));
  docks_ = new PanelDocks(*this, *view_, *view);
  runs_ = new RunsDock(*this, *session_, *view_, *view);  // a live sweep's runs, once one is marked
  source_menu_ = new SourceMenu(*this, *file);
  file->addAction(tr("New s&weep..."), this, [this] { showSweepWindow(); });
  file->addSeparator();
  auto* exports = new ExportActions(*this, *session_);
  exports->addTo(*file);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QAction* pause = run->addAction(tr("&Pause / resume"), this, &MainWindow::togglePause);
  pause->setShortcut(Qt::Key_Space);
  pause->setShortcutContext(Qt::ApplicationShortcut);
  QAction* live = run->addAction(tr("Follow &live"), this, [this] { view_->setFollowLive(true); });
  live->setShortcut(Qt::Key_End);
}

void MainWindow::openSource(std::unique_ptr<Source> source) {
  session_->open(std::move(source));
}

SweepWindow& MainWindow::showSweepWindow() {
  if (!sweep_) {
    sweep_ = new SweepWindow(this);
    // A run's cell opens its recording the way File > Open recording does (errors, recent list).
    connect(sweep_, &SweepWindow::openRecordingRequested, this, [this](const QString& path) {
      SourceSpec spec;
      spec.kind = SourceSpec::Recording;
      spec.target = path.toStdString();
      if (source_menu_->open(spec)) {
        raise();
        activateWindow();
      }
    });
  }
  sweep_->show();
  sweep_->raise();
  return *sweep_;
}

void MainWindow::togglePause() {
  Source* s = session_->source();
  if (!s || !s->capabilities().pause) return;
  if (s->status().state == SourceState::Paused) {
    s->resume();
  } else {
    s->pause();
  }
  updateStatus();
}

void MainWindow::onFrame() {
  const TelemetryStore& store = session_->store();
  view_->advanceLive(store.now());
  docks_->refresh(store);
  updateStatus();
}

void MainWindow::updateStatus() {
  Source* s = session_->source();
  if (!s) {
    status_->setText(tr("no source: File > New simulation, Connect or Open recording"));
    counters_->clear();
    return;
  }
  const SourceStatus st = s->status();
  QString text = QStringLiteral("%1 - %2 - t = %3 s")
                     .arg(QString::fromStdString(s->description()), QString::fromLatin1(toString(st.state)))
                     .arg(timeToSeconds(st.time), 0, 'f', 1);
  if (st.end > 0) text += QStringLiteral(" / %1 s").arg(timeToSeconds(st.end), 0, 'f', 0);
  if (s->capabilities().speed) text += st.speed > 0 ? QStringLiteral(" - %1x").arg(st.speed) : QStringLiteral(" - max speed");
  if (!st.detail.empty()) text += QStringLiteral(" - ") + QString::fromStdString(st.detail);
  status_->setText(text);
  const TelemetryStore& store = session_->store();
  counters_->setText(QStringLiteral("%1 events").arg(static_cast<qulonglong>(store.eventCount())));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  session_->close();
  event->accept();
}

}  // namespace kvscope
