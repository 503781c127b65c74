#pragma once
// Panel 7 of the console: the failure modes the core's diagnosis engine names (ARCHITECTURE.md D6),
// with their evidence and the suggested knob. Clicking one selects its time window everywhere.
// Asking the engine is not free (it sorts every TTFT so far), so it is asked at most once per
// kRecomputeInterval however fast the frames come; the last change still lands once the run stops.
#include <QElapsedTimer>
#include <QTimer>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/run/RunNotes.h"
#include "widgets/common/TelemetryPanel.h"

class QLabel;
class QPushButton;
class QModelIndex;
class QResizeEvent;
class QStackedWidget;
class QSplitter;
class QTableView;

namespace kvscope {

class FindingsModel;
struct Finding;

class DiagnosisPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  static constexpr int kRecomputeIntervalMs = 1000;

  explicit DiagnosisPanel(ViewState& view, QWidget* parent = nullptr);

  void refresh(const TelemetryStore& store) override;
  void refreshNow(const TelemetryStore& store) override;

  FindingsModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  // How many times the engine was asked (for tests of the throttle).
  int recomputations() const { return recomputations_; }
  bool showsEmptyState() const;
  QString emptyStateText() const;
  QString detailsText() const;
  // The selected finding's knob fix as pending values (preview) or sent at once (apply); its real
  // fix, a routing policy, instead when the knob fix can no longer act (no session has started in
  // kNewSessionsWindowS: K moves only new sessions).
  void previewSelectedFix();
  void applySelectedFix();
  // Whether the run takes knob changes: on a read-only run (a live cluster without our router, a
  // recording) the fix buttons are disabled and their tooltip says why.
  void setFixesAllowed(bool allowed, const QString& why_not);
  // The note a finding becomes (the table's context menu, "Add as a note on the run").
  static RunNote noteOf(const Finding& f);

 signals:
  void fixPreviewRequested(const std::map<std::string, double>& knobs);
  void fixApplyRequested(const std::map<std::string, double>& knobs);
  void policyFixPreviewRequested(const std::string& policy);
  void policyFixApplyRequested(const std::string& policy);
  // The workers and links the selected finding concerns (highlighted in every panel).
  void subjectsSelected(const QStringList& subjects);
  // A finding to keep as a note on the open recording (NoteActions adds it).
  void noteRequested(const kvscope::RunNote& note);

 private:
  void buildFindingsTable();
  QWidget* buildDetails();
  void followModel();
  void recompute();
  void fitColumns();
  void fitRows();
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;  // Esc in the table deselects
  void selectFinding(const QModelIndex& index);
  void showDetails(int row);
  void showFixButtons(const Finding* f);
  QString noNewSessionsText() const;
  // The policy to offer instead of `f`'s knob fix, or "" (the knob fix can still act, or there is none).
  std::string policyInstead(const Finding& f) const;

  FindingsModel* model_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QLabel* empty_ = nullptr;
  QTableView* table_ = nullptr;
  QSplitter* split_ = nullptr;
  bool split_by_hand_ = false;  // the operator dragged the list/evidence divider: keep it
  bool fitting_ = false;
  QLabel* details_ = nullptr;
  QPushButton* preview_fix_ = nullptr;
  QPushButton* apply_fix_ = nullptr;
  bool fixes_allowed_ = false;  // until the knobs panel says the run takes changes
  QString fixes_why_not_;
  bool sessions_starting_ = true;                 // a session started in the last kNewSessionsWindowS
  std::optional<std::int64_t> last_new_session_;  // when the last one did (SimTime)
  // The store outlives the panels (the main window owns both); held for the deferred recompute.
  const TelemetryStore* store_ = nullptr;
  // What the findings were computed from; a cleared store restarts its revision, hence the time.
  struct StoreMark {
    const TelemetryStore* store = nullptr;
    std::uint64_t revision = 0;
    std::int64_t now = -1;
    bool operator==(const StoreMark&) const = default;
  };
  std::optional<StoreMark> computed_;
  QElapsedTimer since_recompute_;
  QTimer deferred_;
  int recomputations_ = 0;
};

}  // namespace kvscope
