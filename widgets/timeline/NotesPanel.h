#pragma once
// The operator's notes on the open recording (ViewState::notes), in time order: a double-click (or
// Enter) jumps there, the replay with it. Notes are added with Run > Add note at cursor (N); the
// charts draw them as markers.
#include "widgets/common/TelemetryPanel.h"

class QLabel;
class QListWidget;

namespace kvscope {

class NotesPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  explicit NotesPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore&) override {}  // the notes change on their own signal
  QListWidget& list() { return *list_; }

 private:
  void fill();

  QListWidget* list_;
  QLabel* hint_;
};

}  // namespace kvscope
