#pragma once
// Panel 6 of the console: the routing policy and every knob of the core's registry, with
// range, unit and description; edits validated inline; Apply sends them to the run in one
// all-or-nothing change and shows them pending until the run acknowledges; Revert drops them.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "widgets/common/TelemetryPanel.h"
#include "widgets/knobs/KnobEditModel.h"

class QComboBox;
class QGridLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace kvscope {

class KnobSlider;
struct KnobSpec;
class Source;

class KnobsPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  explicit KnobsPanel(ViewState& view, QWidget* parent = nullptr);
  ~KnobsPanel() override;

  // The run to steer. nullptr, or a source without knob capability (a recording), leaves the panel
  // read-only with a note saying why. The caller keeps `source` alive until it replaces it here or
  // destroys the panel; acknowledgements still in flight from an old source are ignored.
  void setSource(Source* source);
  void refresh(const TelemetryStore& store) override;

  // A pending value set elsewhere (a threshold dragged on a chart, a finding's "Preview fix"): as if
  // typed into the knob's field. False for an unknown knob or a read-only panel.
  bool setPendingValue(const std::string& knob, double value);
  // A pending routing policy set elsewhere (a finding's policy fix): as if picked in the list.
  // False for an unknown policy or a read-only panel.
  bool setPendingPolicy(const std::string& policy);
  const KnobEditModel& edits() const { return model_; }
  // Applies what is pending, as the Apply button does.
  void applyEdits() { apply(); }
  // Asked before Apply sends anything: a non-empty answer refuses the Apply and is shown as why
  // (the preview controller refuses a stale preview and forks a fresh one).
  void setApplyCheck(std::function<QString()> check) { apply_check_ = std::move(check); }
  // A knob's slider is held in a drag (its value is shown; the preview waits for the release).
  bool sliderHeld() const;
  // How many knobs the filter box lists (all of them when it is empty).
  int listedKnobs() const;
  // Whether the attached run takes knob changes; when not, the note the panel shows says why.
  bool editable() const;
  QString readOnlyReason() const;

 signals:
  // The operator's unsent edits changed (typed, dragged, reverted or sent).
  void editsChanged();
  // An edit is finished (a slider released, Enter in a field): nothing more is coming, so what it
  // changed can be previewed at once rather than after a typing pause.
  void editFinished();
  // The run started or stopped taking knob changes (another source, or its capabilities changed).
  void editableChanged(bool editable);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct KnobRow {
    std::string name;
    QLineEdit* field = nullptr;
    KnobSlider* slider = nullptr;  // the same pending value as the field
    QLabel* message = nullptr;     // why the text is refused, under the field
    QLabel* label = nullptr;
    QLabel* unit = nullptr;
    QString haystack;           // what the filter searches: name, description, unit
    bool filtered_out = false;  // hidden by the filter box
  };
  struct KnobGroup {
    QGroupBox* box = nullptr;
    QLabel* heading = nullptr;          // wraps, unlike a group box title, so the list fits a narrow dock
    std::vector<std::string> policies;  // empty: read whatever the policy ("all")
    QString title;
    std::vector<std::size_t> rows;  // into rows_
  };

  QWidget* buildKnobGroups();
  void addKnobRow(const KnobSpec& spec, QGroupBox& box, QGridLayout& grid, int line, int field_width);
  void onFieldEdited(KnobRow& row, const QString& text);
  void applyFilter(const QString& text);
  void onPolicyActivated(int index);
  void apply();
  void revert();
  void sendPolicy(std::uint64_t ticket);
  void onKnobsDone(std::uint64_t ticket, bool ok, const QString& error);
  void onPolicyDone(std::uint64_t ticket, bool ok, const QString& error);
  // Wraps a handler so the source may call it on any thread: it runs later on the GUI thread and
  // not at all once this panel is gone.
  template <typename Handler>
  auto onGuiThread(std::uint64_t ticket, Handler handler);

  // `force`: also replace the text of the field the operator is in (Revert); otherwise it is kept.
  void render(bool force);
  void renderRow(KnobRow& row, bool force);
  void renderPolicy(bool force);
  void renderGroups();
  void renderStatus();

  KnobEditModel model_;
  std::function<QString()> apply_check_;
  Source* source_ = nullptr;
  std::uint64_t ticket_ = 0;  // bumped per Apply and per source, so stale acknowledgements are dropped
  std::map<std::string, double> last_knobs_;
  std::string last_policy_;
  bool last_editable_ = false;
  QString sent_;  // what the last Apply sent, for the acknowledgement line
  bool sent_knobs_ = false;
  QString result_text_;  // the last acknowledgement or refusal
  bool result_is_error_ = false;

  QLabel* source_note_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QComboBox* policy_ = nullptr;
  QLabel* policy_state_ = nullptr;
  std::vector<KnobRow> rows_;
  std::vector<KnobGroup> groups_;
  QLabel* description_ = nullptr;
  QLabel* status_ = nullptr;
  QPushButton* apply_ = nullptr;
  QPushButton* revert_ = nullptr;
};

}  // namespace kvscope
