#pragma once
// The Sweep window's form: scenario, grid axes (a knob or `policy` with comma-separated values, one
// row each), seeds, baseline, simulated duration, jobs and output directory. spec() turns it into a
// core SweepSpec and runs the core's validation, so the console refuses exactly what
// `kvscope-cli sweep` refuses; the error is shown under the form, naming the field, and that field
// is marked.
#include <QString>
#include <QWidget>

#include <optional>

#include "core/sweep/SweepSpec.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableWidget;

namespace kvscope {

class SweepForm : public QWidget {
  Q_OBJECT
 public:
  explicit SweepForm(QWidget* parent = nullptr);

  // The validated spec, or nothing with the error shown inline.
  std::optional<SweepSpec> spec();
  QString outputDir() const;
  // Keep the runs already done in the output directory (a cancelled sweep finishes where it stopped).
  bool resume() const;
  void setResume(bool resume);
  // After a sweep: a fresh default directory, unless the user chose one (the next sweep must not
  // overwrite this one's runs).
  void nextOutputDir();
  QString error() const;

  void setScenario(const QString& name);
  void setSeeds(const QString& seeds);
  void setDuration(const QString& seconds);
  void setBaseline(const QString& baseline);
  void setJobs(int jobs);
  void setOutputDir(const QString& dir);
  // Replaces the grid with these rows (axis name, "v1,v2,...").
  void setAxes(const QList<QPair<QString, QString>>& axes);
  void addAxis(const QString& name = {}, const QString& values = {});

 private:
  void showError(QWidget* field, const QString& message);
  void clearError();
  QWidget* fieldOf(const std::string& message) const;
  void browse();

  QComboBox* scenario_;
  QTableWidget* axes_;
  QLineEdit* seeds_;
  QLineEdit* baseline_;
  QLineEdit* duration_;
  QSpinBox* jobs_;
  QLineEdit* out_;
  QCheckBox* resume_;
  QString default_out_;
  QLabel* error_;
  QWidget* marked_ = nullptr;
};

}  // namespace kvscope
