#pragma once
// Run > Add note at cursor (N): a note on the open recording at the cursor's time (else the
// replay's), kept beside the file (RunNotes); the notes of a recording are loaded when it opens.
#include <QObject>
#include <QString>

#include <string>

#include "core/run/RunNotes.h"

class QMenu;
class QWidget;

namespace kvscope {

class RunSession;
class ViewState;

class NoteActions : public QObject {
  Q_OBJECT
 public:
  NoteActions(QWidget& window, RunSession& session, ViewState& view);
  void addTo(QMenu& menu);

  // The halves without a dialog (tests). False with `error` when there is no recording open, or the
  // note or the file cannot be written.
  bool addNote(SimTime time, const QString& text, QString* error);
  const std::string& recording() const { return recording_; }

 private:
  void sourceChanged();

  QWidget& window_;
  RunSession& session_;
  ViewState& view_;
  std::string recording_;  // the open recording's path, or empty
  RunNotes notes_;
};

}  // namespace kvscope
