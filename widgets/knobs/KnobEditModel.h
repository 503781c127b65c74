#pragma once
// What the knobs panel knows apart from its widgets: the run's current knob values and policy, the
// operator's unsent edits (validated against the core's KnobRegistry), what was sent and is waiting
// for the run's acknowledgement, and what was acknowledged but not yet seen back in the store.
// Plain state, no signals: the panel renders from it after every change.
#include <QString>

#include <map>
#include <optional>
#include <string>

namespace kvscope {

enum class KnobFieldState { Current, Edited, Invalid, Pending };
const char* toString(KnobFieldState);

class KnobEditModel {
 public:
  // What the run reports (store.knobs(), store.policy()). A knob the run has not reported shows the
  // registry's default.
  void setCurrent(const std::map<std::string, double>& knobs, const std::string& policy);

  // The operator's text for `knob`, validated with the registry's own parser and range check. An
  // edit that parses to the current value is no edit at all.
  KnobFieldState edit(const std::string& knob, const QString& text);
  void editPolicy(const std::string& policy);

  KnobFieldState state(const std::string& knob) const;
  QString message(const std::string& knob) const;  // why the text is refused; empty when valid
  // What a field shows when the operator is not typing in it: the edit, the pending value, the value
  // just acknowledged (until the store reports it), or the run's current value.
  QString displayText(const std::string& knob) const;
  std::string displayPolicy() const;
  bool policyEdited() const { return policy_edit_.has_value(); }
  bool policyPending() const { return policy_pending_.has_value(); }
  const std::string& currentPolicy() const { return current_policy_; }

  bool hasEdits() const { return !edits_.empty() || policy_edit_.has_value(); }
  bool hasInvalid() const;
  bool pending() const { return !pending_.empty() || policy_pending_.has_value(); }
  bool canApply() const { return hasEdits() && !hasInvalid() && !pending(); }

  // Moves every edit to pending and returns what to send: the knobs in one all-or-nothing change,
  // then the policy. Only when canApply().
  struct Change {
    std::map<std::string, double> knobs;
    std::optional<std::string> policy;
  };
  Change takeEdits();
  // The unsent edits as they stand (valid ones only), without taking them: what a preview tries.
  Change edits() const;
  const std::map<std::string, double>& pendingKnobs() const { return pending_; }
  const std::optional<std::string>& pendingPolicy() const { return policy_pending_; }

  void knobsAccepted();
  void policyAccepted();
  // The run refused: whatever is still pending becomes an edit again, unless the operator has
  // typed over it meanwhile (the newer text wins).
  void refused();
  void revert();         // drops the unsent edits
  void forgetPending();  // the source went away: nobody will acknowledge

  static QString formatValue(double v);

 private:
  double current(const std::string& knob) const;
  // What the field shows without an edit: pending, else just accepted, else current.
  double baseline(const std::string& knob) const;
  std::string displayPolicyWithoutEdit() const;

  struct Edit {
    QString text;
    double value = 0;
    QString error;  // empty when the text is a valid value
  };
  // A value the run accepted, shown until the store reports it or reports anything else.
  struct Accepted {
    double value = 0;
    double store_value_then = 0;
  };
  std::map<std::string, double> current_;
  std::string current_policy_;
  std::map<std::string, Edit> edits_;
  std::map<std::string, double> pending_;
  std::map<std::string, Accepted> accepted_;
  std::optional<std::string> policy_edit_, policy_pending_;
  std::optional<std::pair<std::string, std::string>> policy_accepted_;  // (new, store's then)
};

}  // namespace kvscope
