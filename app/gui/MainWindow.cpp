#include "app/gui/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QWindow>

#include <algorithm>

#include "app/gui/CompareActions.h"
#include "app/gui/ExportActions.h"
#include "app/gui/FindingAlert.h"
#include "app/gui/NoteActions.h"
#include "app/gui/PanelDocks.h"
#include "app/gui/PanelRegistry.h"
#include "app/gui/PreviewController.h"
#include "app/gui/SessionRecorder.h"
#include "app/gui/ShortcutsDialog.h"
#include "app/gui/SourceFactory.h"
#include "app/gui/SourceMenu.h"
#include "app/gui/TwinRunActions.h"
#include "backend/recording/KvrecSweepRecorder.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"
#include "widgets/diagnosis/DiagnosisPanel.h"
#include "widgets/knobs/KnobsPanel.h"
#include "widgets/runs/RunsDock.h"
#include "widgets/sweep/SweepForm.h"
#include "widgets/sweep/SweepWindow.h"

namespace kvscope {

MainWindow::MainWindow(Layout layout, QWidget* parent)
    : QMainWindow(parent),
      view_(new ViewState(this)),
      session_(new RunSession(this)),
      status_(new QLabel(this)),
      counters_(new QLabel(this)),
      not_live_(new QPushButton(tr("Not live: jump to now (End)"), this)),
      pause_offer_(new QPushButton(this)),
      layout_(layout) {
  setWindowTitle("KVScope");
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(counters_);
  // A view that stopped following (a zoom, a pan, a finding's window) says so, and how to get back.
  not_live_->setObjectName(QStringLiteral("notLive"));
  not_live_->setStyleSheet(QStringLiteral("QPushButton { background: #f0c36d; color: black; padding: 0 8px; }"));
  // A line of text tall, as the status bar is: a shown offer must not grow the window's minimum.
  not_live_->setFixedHeight(fontMetrics().height() + 2);
  not_live_->setFocusPolicy(Qt::NoFocus);  // never the focus Space would click: Space pauses
  not_live_->hide();
  statusBar()->addPermanentWidget(not_live_);
  connect(not_live_, &QPushButton::clicked, view_, [this] { view_->setFollowLive(true); });
  connect(view_, &ViewState::followLiveChanged, this,
          [this](bool follow) { not_live_->setVisible(!follow && session_->source() != nullptr); });
  alert_ = new FindingAlert(*this, windowTitle());
  // At 10x a finding comes when a knob can still act only if the operator stops the run now: the
  // offer to pause comes with the finding, and with an edit made while the run goes on.
  pause_offer_->setObjectName(QStringLiteral("pauseOffer"));
  pause_offer_->setStyleSheet(QStringLiteral("QPushButton { background: #9ecae1; color: black; padding: 0 8px; }"));
  pause_offer_->setFixedHeight(fontMetrics().height() + 2);
  pause_offer_->setFocusPolicy(Qt::NoFocus);
  pause_offer_->hide();
  statusBar()->addWidget(pause_offer_);
  connect(pause_offer_, &QPushButton::clicked, this, &MainWindow::togglePause);
  connect(alert_, &FindingAlert::newFinding, this,
          [this](const QString& message) { offerPause(tr("New finding %1. Pause (Space)").arg(message)); });
  buildMenus();
  connect(&docks_->knobs(), &KnobsPanel::editsChanged, this, [this] {
    if (docks_->knobs().edits().hasEdits())
      offerPause(tr("Pause (Space) to preview and apply the edit at this moment"));
  });
  connect(session_, &RunSession::frame, this, &MainWindow::onFrame);
  connect(session_, &RunSession::sourceChanged, this, [this] {
    view_->setFollowLive(true);
    docks_->setSource(session_->source());
    updateStatus();
  });
  connect(session_, &RunSession::sourceFailed, this,
          [this](const QString& message) { QMessageBox::warning(this, tr("Source failed"), message); });
}

MainWindow::~MainWindow() = default;

namespace {
bool fitsIn(QSize size, QSize room) { return size.width() <= room.width() && size.height() <= room.height(); }

// `rect` moved and, where it must be, shrunk to lie inside `room`.
QRect insideOf(QRect rect, const QRect& room) {
  rect.setSize(rect.size().boundedTo(room.size()));
  rect.moveLeft(std::clamp(rect.left(), room.left(), room.right() + 1 - rect.width()));
  rect.moveTop(std::clamp(rect.top(), room.top(), room.bottom() + 1 - rect.height()));
  return rect;
}
}  // namespace

void MainWindow::showAtStart() {
  QSettings settings;
  const QRect screen_room = screen()->availableGeometry();
  docks_->setRoom(screenshot_size_.isValid() ? screenshot_size_ : screen_room.size());
  if (screenshot_size_.isValid() || layout_ == Layout::Default) {
    screenshot_ = screenshot_size_.isValid();
    resize(screenshot_ ? screenshot_size_ : screen_room.size());
  } else if (restoreGeometry(settings.value("window/geometry").toByteArray())) {
    // A layout saved by a build with other panels leaves the new ones where QMainWindow put them
    // (beside the timeline, not in its tabs), which can push the window past the screen: the
    // default layout instead, in the saved window's place.
    const bool same_panels = settings.value("window/panels").toStringList() == panelIds();
    layout_restored_ = same_panels && restoreState(settings.value("window/state").toByteArray());
    show();
    fitRestoredLayout(screen_room);
    if (!same_panels)
      statusBar()->showMessage(tr("The saved layout has other panels than this version: the default layout is shown"),
                               15000);
    return;
  } else {
    setGeometry(screen_room);
  }
  if (screenshot_)
    show();
  else
    showMaximized();
  // Re-docking asks the layout for the docks' preferred sizes, which may grow a window that is
  // not maximized by a window manager (offscreen, Xvfb): the size asked for wins, and without a
  // window manager the screen's room does (else the status bar opens below the screen's edge).
  if (screenshot_) {
    resize(screenshot_size_);
  } else {
    QTimer::singleShot(0, this, [this, screen_room] {
      if (width() > screen_room.width() || height() > screen_room.height())
        resize(size().boundedTo(screen_room.size()));
    });
  }
}

// A layout saved on a larger screen (or at a smaller scale) comes back inside this one; one whose
// panels cannot fit in it gives way to the default layout, which is made for it. The frame's
// margins are known once the window is shown.
void MainWindow::fitRestoredLayout(const QRect& room) {
  const QMargins frame = windowHandle() ? windowHandle()->frameMargins() : QMargins();
  const QSize inside = room.size().shrunkBy(frame);
  if (layout_restored_ && !fitsIn(minimumSizeHint(), inside)) {
    layout_restored_ = false;
    docks_->setRoom(inside);
    docks_->applyDefaultLayout();
    statusBar()->showMessage(tr("The saved layout does not fit this screen: the default layout is shown"), 15000);
  }
  const QRect outer = insideOf(frameGeometry(), room);
  if (outer != frameGeometry()) setGeometry(outer.marginsRemoved(frame));
}

// The default layout depends on the window's size, known only once it is shown.
void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (shown_once_) return;
  shown_once_ = true;
  if (!layout_restored_) docks_->applyDefaultLayout();
}

// The default layout is made for a size: it follows a resized window (PanelDocks::windowResized).
void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  if (shown_once_) docks_->windowResized();
}

void MainWindow::resetLayout() { docks_->applyDefaultLayout(); }

void MainWindow::goToTime() {
  bool ok = false;
  const double centre = timeToSeconds(view_->from() + (view_->to() - view_->from()) / 2);
  const double seconds = QInputDialog::getDouble(this, tr("Go to time"), tr("Run time (seconds) to centre on:"), centre,
                                                 0, 30 * 86400, 1, &ok);
  if (ok) view_->goToTime(secondsToTime(seconds));
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  QMenu* view = menuBar()->addMenu(tr("&View"));
  docks_ = new PanelDocks(*this, *view_, *view);
  preview_ = new PreviewController(*session_, *view_, *docks_, this);
  runs_ = new RunsDock(*this, *session_, *view_, *view);  // a live sweep's runs, once one is marked
  source_menu_ = new SourceMenu(*this, *file);
  file->addAction(tr("New s&weep..."), this, [this] { showSweepWindow(); });
  compare_ = new CompareActions(*this, *session_, *view_, *docks_);
  compare_->addToFile(*file);
  twin_ = new TwinRunActions(*this, *compare_);
  twin_->addTo(*file);
  file->addSeparator();
  auto* exports = new ExportActions(*this, *session_);
  exports->addTo(*file);
  addRecordingAction(*file);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QAction* pause = run->addAction(tr("&Pause / resume"), this, &MainWindow::togglePause);
  pause->setShortcut(Qt::Key_Space);
  pause->setShortcutContext(Qt::ApplicationShortcut);
  QAction* live = run->addAction(tr("Follow &live"), this, [this] { view_->setFollowLive(true); });
  live->setShortcut(Qt::Key_End);
  run->addSeparator();
  auto* notes = new NoteActions(*this, *session_, *view_);
  notes->addTo(*run);
  if (auto* diagnosis = qobject_cast<DiagnosisPanel*>(docks_->panel("diagnosis")))
    connect(diagnosis, &DiagnosisPanel::noteRequested, notes, [this, notes](const RunNote& note) {
      QString error;
      if (!notes->addNote(note.time, QString::fromStdString(note.text), &error))
        QMessageBox::warning(this, tr("Notes"), error);
    });
  // The time axis's actions, on the one range every chart and the timeline read (ViewState).
  view->addSeparator();
  QAction* zoom_in = view->addAction(tr("Zoom &in"), view_, &ViewState::zoomIn);
  zoom_in->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
  view->addAction(tr("Zoom &out"), view_, &ViewState::zoomOut)->setShortcut(QKeySequence::ZoomOut);
  view->addAction(tr("&Undo zoom"), view_, &ViewState::undoRange)->setShortcut(QKeySequence::Undo);
  view->addAction(tr("Reset &zoom (follow live)"), view_, &ViewState::resetZoom)
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  view->addAction(tr("&Go to time..."), this, &MainWindow::goToTime)->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
  compare_->addToView(*view);
  view->addSeparator();
  view->addAction(tr("&Reset layout"), this, &MainWindow::resetLayout);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* keys = help->addAction(tr("&Keyboard shortcuts"), this, [this] {
    auto* dialog = new ShortcutsDialog(*menuBar(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
  });
  keys->setShortcuts({QKeySequence(Qt::Key_Question), QKeySequence(Qt::Key_F1)});
}

// File > Record this session...: from now on, to a .kvrec; the same entry stops it.
void MainWindow::addRecordingAction(QMenu& file) {
  recorder_ = new SessionRecorder(*session_, this);
  QAction* record = file.addAction(tr("&Record this session..."));
  record->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
  connect(record, &QAction::triggered, this, [this] {
    QString error;
    if (recorder_->recording()) {
      if (!recorder_->stop(&error)) QMessageBox::warning(this, tr("Recording"), error);
      return;
    }
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Record this session"), "session.kvrec", tr("Recordings (*.kvrec)"));
    if (!path.isEmpty() && !recorder_->start(path, &error)) QMessageBox::warning(this, tr("Recording"), error);
  });
  connect(recorder_, &SessionRecorder::recordingChanged, this, [this, record](bool on) {
    record->setText(on ? tr("Stop &recording (%1)").arg(QFileInfo(recorder_->path()).fileName())
                       : tr("&Record this session..."));
    updateStatus();
  });
  connect(recorder_, &SessionRecorder::failed, this,
          [this](const QString& message) { QMessageBox::warning(this, tr("Recording"), message); });
}

void MainWindow::openSource(std::unique_ptr<Source> source) { session_->open(std::move(source)); }

SweepWindow& MainWindow::showSweepWindow() {
  if (!sweep_) {
    sweep_ = new SweepWindow(KvrecSweepRecorder::factory(), this);
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
  // New sweeps start from what the console runs now.
  if (const auto& run = session_->store().run(); run && !sweep_->isVisible())
    sweep_->form().setScenario(QString::fromStdString(run->scenario));
  sweep_->show();
  sweep_->raise();
  return *sweep_;
}

void MainWindow::togglePause() {
  Source* s = session_->source();
  RunControl* run = s ? s->control() : nullptr;
  if (!run || !s->capabilities().pause) return;
  if (s->status().state == SourceState::Paused) {
    run->resume(consoleAuthor());
  } else {
    run->pause(consoleAuthor());
  }
  updateStatus();
}

void MainWindow::offerPause(const QString& text) {
  Source* s = session_->source();
  if (!s || !s->capabilities().pause || s->status().state != SourceState::Running) return;
  pause_offer_->setText(text);
  pause_offer_->show();
}

void MainWindow::onFrame() {
  const TelemetryStore& store = session_->store();
  view_->advanceLive(store.now());
  docks_->refresh(store);
  alert_->update(store);
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
  if (st.state != SourceState::Running) pause_offer_->hide();  // paused (or over): nothing to offer
  QString text = QStringLiteral("%1 - %2 - t = %3 s")
                     .arg(QString::fromStdString(s->description()), QString::fromLatin1(toString(st.state)))
                     .arg(timeToSeconds(st.time), 0, 'f', 1);
  if (st.end > 0) text += QStringLiteral(" / %1 s").arg(timeToSeconds(st.end), 0, 'f', 0);
  if (s->capabilities().speed)
    text += st.speed > 0 ? QStringLiteral(" - %1x").arg(st.speed) : QStringLiteral(" - max speed");
  if (!st.detail.empty()) text += QStringLiteral(" - ") + QString::fromStdString(st.detail);
  if (recorder_ && recorder_->recording()) text += tr(" - recording to %1").arg(recorder_->path());
  status_->setText(text);
  const TelemetryStore& store = session_->store();
  counters_->setText(QStringLiteral("%1 events").arg(static_cast<qulonglong>(store.eventCount())));
}

QStringList MainWindow::panelIds() {
  QStringList ids;
  for (const PanelSpec& spec : panelSpecs()) ids << QString::fromLatin1(spec.id);
  return ids;
}

void MainWindow::saveLayout() const {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  settings.setValue("window/panels", panelIds());  // which panels the state places (showAtStart)
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!screenshot_) saveLayout();  // a headless screenshot's size is not the user's window
  session_->close();
  event->accept();
}

}  // namespace kvscope
