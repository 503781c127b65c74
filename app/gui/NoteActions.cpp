#include "app/gui/NoteActions.h"

#include <QAction>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QWidget>

#include "backend/source/RecordingSource.h"
#include "core/model/Error.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

NoteActions::NoteActions(QWidget& window, RunSession& session, ViewState& view)
    : QObject(&window), window_(window), session_(session), view_(view) {
  connect(&session_, &RunSession::sourceChanged, this, &NoteActions::sourceChanged);
  sourceChanged();
}

void NoteActions::sourceChanged() {
  const auto* recording = dynamic_cast<const RecordingSource*>(session_.source());
  recording_ = recording ? recording->path() : std::string();
  notes_ = RunNotes();
  if (!recording_.empty()) {
    try {
      notes_ = RunNotes::loadFor(recording_);
    } catch (const InputError& e) {
      // The recording still opens; the notes file is left as it is for the operator to mend.
      QMessageBox::warning(&window_, tr("Notes"), QString::fromStdString(e.what()));
    }
  }
  view_.setNotes(notes_.notes());
}

bool NoteActions::addNote(SimTime time, const QString& text, QString* error) {
  std::string why;
  if (recording_.empty()) {
    why = "notes go on a recording: open one (File > Open recording)";
  } else {
    RunNotes next = notes_;
    if (next.add({time, text.toStdString()}, &why) && next.saveFor(recording_, &why)) {
      notes_ = std::move(next);
      view_.setNotes(notes_.notes());
      return true;
    }
  }
  if (error) *error = QString::fromStdString(why);
  return false;
}

void NoteActions::addTo(QMenu& menu) {
  QAction* add = menu.addAction(tr("Add &note at cursor..."));
  add->setShortcut(Qt::Key_N);
  connect(add, &QAction::triggered, this, [this] {
    const Source* source = session_.source();
    const SimTime at = view_.cursorTime().value_or(source ? source->status().time : 0);
    bool ok = false;
    const QString text = QInputDialog::getText(&window_, tr("Add note"), tr("Note at %1 s:").arg(timeToSeconds(at)),
                                               QLineEdit::Normal, QString(), &ok);
    QString error;
    if (ok && !addNote(at, text, &error)) QMessageBox::warning(&window_, tr("Notes"), error);
  });
}

}  // namespace kvscope
