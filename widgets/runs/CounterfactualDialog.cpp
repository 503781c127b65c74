#include "widgets/runs/CounterfactualDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QVBoxLayout>

#include <algorithm>

#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"

namespace kvscope {

CounterfactualDialog::CounterfactualDialog(const QString& recording, const QString& recorded_scenario,
                                           const QString& recorded_policy, QWidget* parent)
    : QDialog(parent),
      scenario_(new QLineEdit(this)),
      policy_(new QComboBox(this)),
      knobs_(new QLineEdit(this)),
      seed_(new QLineEdit(this)),
      error_(new QLabel(this)) {
  setWindowTitle(tr("Replay this run under..."));
  setMinimumWidth(fontMetrics().averageCharWidth() * 72);  // the knobs' example and the intro on few lines
  for (std::string_view name : policyNames()) policy_->addItem(QString::fromUtf8(name.data(), qsizetype(name.size())));
  if (const int i = policy_->findText(recorded_policy); i >= 0) policy_->setCurrentIndex(i);
  scenario_->setPlaceholderText(tr("%1 (as recorded)").arg(recorded_scenario));
  knobs_->setPlaceholderText(tr("e.g. K=200 sticky_bonus=50 (over the recorded knobs)"));
  seed_->setPlaceholderText(tr("as recorded"));
  error_->setWordWrap(true);
  error_->setStyleSheet(QStringLiteral("color: #d62728"));
  auto* intro = new QLabel(tr("The twin runs %1's own traffic (arrivals, sizes, reuse) under this policy and "
                              "these knobs, and once more as the run was recorded: the Compare runs panel shows "
                              "this run, the twin's replay of it and the counterfactual.")
                               .arg(recording),
                           this);
  intro->setWordWrap(true);
  auto* form = new QFormLayout;
  form->addRow(tr("Policy:"), policy_);
  form->addRow(tr("Knobs:"), knobs_);
  form->addRow(tr("Seed:"), seed_);
  form->addRow(tr("Scenario (cluster):"), scenario_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(intro);
  layout->addLayout(form);
  layout->addWidget(error_);
  layout->addWidget(buttons);
}

std::optional<Counterfactual> CounterfactualDialog::counterfactual(QString* error) const {
  Counterfactual c;
  c.scenario = scenario_->text().trimmed().toStdString();
  c.policy = policy_->currentText().toStdString();
  static const QRegularExpression separators(QStringLiteral("[\\s,;]+"));
  const QStringList assignments = knobs_->text().split(separators, Qt::SkipEmptyParts);
  for (const QString& a : assignments)
    if (auto problem = KnobRegistry::parseAssignment(a.toStdString(), c.knobs)) {
      if (error) *error = tr("Knobs: %1").arg(QString::fromStdString(*problem));
      return std::nullopt;
    }
  for (const auto& knob : c.knobs) {
    const std::string& name = knob.first;
    const auto& specs = KnobRegistry::specs();
    if (std::none_of(specs.begin(), specs.end(), [&](const KnobSpec& s) { return s.name == name; })) {
      if (error)
        *error = tr("Knobs: no knob '%1'; the knobs are %2")
                     .arg(QString::fromStdString(name), QString::fromStdString(KnobRegistry::validNames()));
      return std::nullopt;
    }
  }
  if (const QString seed = seed_->text().trimmed(); !seed.isEmpty()) {
    bool ok = false;
    c.seed = seed.toULongLong(&ok);
    if (!ok) {
      if (error) *error = tr("Seed: expected a whole number >= 0, got '%1'").arg(seed);
      return std::nullopt;
    }
  }
  return c;
}

void CounterfactualDialog::accept() {
  QString error;
  if (!counterfactual(&error)) {
    error_->setText(error);
    return;
  }
  QDialog::accept();
}

}  // namespace kvscope
