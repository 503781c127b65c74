#pragma once
// File > Replay this run under...: the policy, knobs, seed and (when the recorded one is not here)
// scenario for the twin on the open recording's traffic. Knobs are typed as --set takes them
// ("K=200 sticky_bonus=50"); a bad one keeps the dialog open and says which, and why.
#include <QDialog>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

class QComboBox;
class QLabel;
class QLineEdit;

namespace kvscope {

struct Counterfactual {
  std::string scenario;  // empty: the recorded one
  std::string policy;
  std::map<std::string, double> knobs;
  std::optional<std::uint64_t> seed;  // empty: the recorded one
};

class CounterfactualDialog : public QDialog {
  Q_OBJECT
 public:
  // `recorded_*`: what the run ran (shown, and the policy preselected).
  CounterfactualDialog(const QString& recording, const QString& recorded_scenario, const QString& recorded_policy,
                       QWidget* parent = nullptr);
  // What the fields say; nullopt with `error` when a field cannot be used.
  std::optional<Counterfactual> counterfactual(QString* error) const;

  QComboBox& policy() { return *policy_; }
  QLineEdit& knobs() { return *knobs_; }
  QLineEdit& seed() { return *seed_; }
  QLineEdit& scenario() { return *scenario_; }

  void accept() override;  // only what counterfactual() takes

 private:
  QLineEdit* scenario_;
  QComboBox* policy_;
  QLineEdit* knobs_;
  QLineEdit* seed_;
  QLabel* error_;
};

}  // namespace kvscope
