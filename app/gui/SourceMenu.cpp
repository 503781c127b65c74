#include "app/gui/SourceMenu.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>

#include "app/gui/MainWindow.h"
#include "app/gui/SourceFactory.h"
#include "core/scenario/Scenario.h"
#include "widgets/common/RunSession.h"

namespace kvscope {

namespace {
constexpr int kMaxRecent = 8;
// Recent entries are stored as "kind|target" so one list serves every kind of source.
const char* kindKey(SourceSpec::Kind kind) {
  switch (kind) {
    case SourceSpec::Simulation:
      return "sim";
    case SourceSpec::Remote:
      return "connect";
    case SourceSpec::Recording:
      return "replay";
    case SourceSpec::Live:
      return "live";
  }
  return "sim";
}
QString encode(const SourceSpec& s) {
  return QStringLiteral("%1|%2").arg(QString::fromLatin1(kindKey(s.kind)), QString::fromStdString(s.target));
}
}  // namespace

SourceMenu::SourceMenu(MainWindow& window, QMenu& file) : QObject(&window), window_(window) {
  QAction* sim = file.addAction(tr("&New simulation..."), this, &SourceMenu::newSimulation);
  sim->setShortcut(QKeySequence::New);
  QAction* connect = file.addAction(tr("&Connect..."), this, &SourceMenu::connectToServer);
  connect->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  QAction* open = file.addAction(tr("&Open recording..."), this, &SourceMenu::openRecording);
  open->setShortcut(QKeySequence::Open);
  file.addAction(tr("Watch &live cluster..."), this, &SourceMenu::watchLiveCluster);
  recent_ = file.addMenu(tr("Open &recent"));
  rebuildRecent();
}

bool SourceMenu::open(const SourceSpec& spec) {
  std::unique_ptr<Source> source;
  try {
    source = makeSource(spec);  // checked first: a bad file never costs the running session
  } catch (const std::exception& e) {
    QMessageBox::warning(&window_, tr("Cannot open"), QString::fromStdString(e.what()));
    return false;
  }
  // Replacing a session that is still going drops what the console holds of it: ask first.
  if (Source* current = window_.session().source()) {
    const SourceState state = current->status().state;
    if (state != SourceState::Finished && state != SourceState::Failed &&
        QMessageBox::question(
            &window_, tr("Replace the running session?"),
            tr("%1 is still running. Open %2 instead? What the console shows of the running session "
               "is dropped (a served or recorded run itself is not affected).")
                .arg(QString::fromStdString(current->description()), QString::fromStdString(source->description())),
            QMessageBox::Open | QMessageBox::Cancel, QMessageBox::Cancel) != QMessageBox::Open)
      return false;
  }
  window_.openSource(std::move(source));
  remember(spec);
  return true;
}

void SourceMenu::newSimulation() {
  QStringList names;
  for (const std::string& n : Scenario::bundledNames()) names << QString::fromStdString(n);
  names << tr("Other scenario file...");
  // The current run's scenario and knobs by default: "the same again, from the start".
  const TelemetryStore& store = window_.session().store();
  const QString current = store.run() ? QString::fromStdString(store.run()->scenario) : QString();
  const int preselected = std::max(0, static_cast<int>(names.indexOf(current)));
  bool ok = false;
  const QString choice = QInputDialog::getItem(
      &window_, tr("New simulation"),
      current.isEmpty() ? tr("Scenario:") : tr("Scenario (knobs as now when it is the current one):"), names,
      preselected, false, &ok);
  if (!ok) return;
  SourceSpec spec;
  spec.target = choice.toStdString();
  if (choice == current) spec.knobs = store.knobs();
  if (choice == names.back()) {
    const QString file = QFileDialog::getOpenFileName(&window_, tr("Scenario file"), {}, tr("Scenarios (*.json)"));
    if (file.isEmpty()) return;
    spec.target = file.toStdString();
  }
  open(spec);
}

void SourceMenu::connectToServer() {
  bool ok = false;
  const QString address = QInputDialog::getText(&window_, tr("Connect"), tr("kvscope-cli serve at HOST:PORT:"),
                                                QLineEdit::Normal, QStringLiteral("127.0.0.1:50051"), &ok);
  if (!ok || address.isEmpty()) return;
  SourceSpec spec;
  spec.kind = SourceSpec::Remote;
  spec.target = address.toStdString();
  if (QMessageBox::question(&window_, tr("Connect"), tr("Does the server need a control token file?")) ==
      QMessageBox::Yes)
    spec.token_file = QFileDialog::getOpenFileName(&window_, tr("Token file")).toStdString();
  open(spec);
}

void SourceMenu::openRecording() {
  const QString file = QFileDialog::getOpenFileName(&window_, tr("Open recording"), {}, tr("Recordings (*.kvrec)"));
  if (file.isEmpty()) return;
  SourceSpec spec;
  spec.kind = SourceSpec::Recording;
  spec.target = file.toStdString();
  open(spec);
}

void SourceMenu::watchLiveCluster() {
  const QString file =
      QFileDialog::getOpenFileName(&window_, tr("Watch live cluster"), {}, tr("Cluster files (*.yaml *.yml)"));
  if (file.isEmpty()) return;
  SourceSpec spec;
  spec.kind = SourceSpec::Live;
  spec.target = file.toStdString();
  open(spec);
}

void SourceMenu::remember(const SourceSpec& spec) {
  QSettings settings;
  QStringList recent = settings.value("recent").toStringList();
  recent.removeAll(encode(spec));
  recent.prepend(encode(spec));
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("recent", recent);
  rebuildRecent();
}

void SourceMenu::rebuildRecent() {
  recent_->clear();
  const QStringList recent = QSettings().value("recent").toStringList();
  for (const QString& entry : recent) {
    const QString kind = entry.section('|', 0, 0);
    const QString target = entry.section('|', 1);
    const QString label = kind == "sim"       ? tr("Simulation %1").arg(target)
                          : kind == "connect" ? tr("Server %1").arg(target)
                          : kind == "live"    ? tr("Live cluster %1").arg(QFileInfo(target).fileName())
                                              : tr("Recording %1").arg(QFileInfo(target).fileName());
    recent_->addAction(label, this, [this, kind, target] {
      SourceSpec spec;
      spec.kind = kind == "sim"       ? SourceSpec::Simulation
                  : kind == "connect" ? SourceSpec::Remote
                  : kind == "live"    ? SourceSpec::Live
                                      : SourceSpec::Recording;
      spec.target = target.toStdString();
      open(spec);
    });
  }
  recent_->setEnabled(!recent.isEmpty());
}

}  // namespace kvscope
