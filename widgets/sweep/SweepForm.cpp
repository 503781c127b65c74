#include "widgets/sweep/SweepForm.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include "core/model/Error.h"
#include "core/scenario/Scenario.h"

namespace kvscope {

namespace {
// The core words its errors for the command line ("--grid K: ..."); the form names its own fields.
struct FlagName {
  const char* flag;
  const char* label;
};
constexpr FlagName kFlags[] = {{"--scenario", "Scenario"}, {"--grid", "Grid axis"},    {"--seeds", "Seeds"},
                               {"--baseline", "Baseline"}, {"--duration", "Duration"}, {"--jobs", "Jobs"},
                               {"--set", "Fixed knob"},    {"--level", "Level"}};

QString defaultOutputDir() {
  QString base = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  if (base.isEmpty()) base = QDir::temp().filePath(QStringLiteral("kvscope"));
  return QDir(base).filePath(QStringLiteral("sweeps/") + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss"));
}
}  // namespace

SweepForm::SweepForm(QWidget* parent)
    : QWidget(parent),
      scenario_(new QComboBox(this)),
      axes_(new QTableWidget(0, 2, this)),
      seeds_(new QLineEdit(QStringLiteral("3"), this)),
      baseline_(new QLineEdit(this)),
      duration_(new QLineEdit(this)),
      jobs_(new QSpinBox(this)),
      out_(new QLineEdit(defaultOutputDir(), this)),
      resume_(new QCheckBox(tr("Resume: keep the runs already done there"), this)),
      default_out_(out_->text()),
      error_(new QLabel(this)) {
  scenario_->setObjectName(QStringLiteral("scenario"));
  axes_->setObjectName(QStringLiteral("axes"));
  seeds_->setObjectName(QStringLiteral("seeds"));
  baseline_->setObjectName(QStringLiteral("baseline"));
  duration_->setObjectName(QStringLiteral("duration"));
  jobs_->setObjectName(QStringLiteral("jobs"));
  out_->setObjectName(QStringLiteral("outputDir"));
  resume_->setObjectName(QStringLiteral("resume"));
  error_->setObjectName(QStringLiteral("formError"));

  scenario_->setEditable(true);  // a scenario file path works too
  for (const std::string& n : Scenario::bundledNames()) scenario_->addItem(QString::fromStdString(n));
  setScenario(QStringLiteral("e3-load-floor"));
  axes_->setHorizontalHeaderLabels({tr("Knob or policy"), tr("Values (comma-separated)")});
  axes_->horizontalHeader()->setStretchLastSection(true);
  axes_->horizontalHeader()->resizeSection(0, 110);
  axes_->verticalHeader()->hide();
  axes_->setMinimumHeight(90);
  axes_->setMaximumHeight(130);
  addAxis(QStringLiteral("K"), QStringLiteral("0,50,200"));
  auto* add = new QPushButton(tr("Add axis"), this);
  auto* remove = new QPushButton(tr("Remove axis"), this);
  add->setObjectName(QStringLiteral("addAxis"));
  remove->setObjectName(QStringLiteral("removeAxis"));
  connect(add, &QPushButton::clicked, this, [this] { addAxis(); });
  connect(remove, &QPushButton::clicked, this, [this] {
    const int row = axes_->currentRow() >= 0 ? axes_->currentRow() : axes_->rowCount() - 1;
    if (row >= 0) axes_->removeRow(row);
  });
  seeds_->setPlaceholderText(tr("N (seeds 1..N) or a list 3,7,11"));
  baseline_->setPlaceholderText(tr("e.g. K=0,policy=kv-aware (default: the first point)"));
  duration_->setPlaceholderText(tr("the scenario's"));
  jobs_->setRange(1, 1024);
  jobs_->setValue(std::max(1, QThread::idealThreadCount()));
  auto* browse = new QPushButton(tr("Browse..."), this);
  connect(browse, &QPushButton::clicked, this, &SweepForm::browse);
  error_->setWordWrap(true);
  error_->setStyleSheet(QStringLiteral("color: #b00020;"));
  error_->hide();

  auto* axis_buttons = new QHBoxLayout;
  axis_buttons->addWidget(add);
  axis_buttons->addWidget(remove);
  axis_buttons->addStretch(1);
  auto* grid = new QVBoxLayout;
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(axes_);
  grid->addLayout(axis_buttons);
  auto* out_row = new QHBoxLayout;
  out_row->addWidget(out_, 1);
  out_row->addWidget(browse);
  auto* form = new QFormLayout;
  form->addRow(tr("Scenario:"), scenario_);
  form->addRow(tr("Grid:"), grid);
  form->addRow(tr("Seeds:"), seeds_);
  form->addRow(tr("Baseline:"), baseline_);
  form->addRow(tr("Duration (s):"), duration_);
  form->addRow(tr("Jobs:"), jobs_);
  form->addRow(tr("Output directory:"), out_row);
  form->addRow(QString(), resume_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(form);
  layout->addWidget(error_);
}

void SweepForm::setScenario(const QString& name) { scenario_->setCurrentText(name); }
void SweepForm::setSeeds(const QString& seeds) { seeds_->setText(seeds); }
void SweepForm::setDuration(const QString& seconds) { duration_->setText(seconds); }
void SweepForm::setBaseline(const QString& baseline) { baseline_->setText(baseline); }
void SweepForm::setJobs(int jobs) { jobs_->setValue(jobs); }
void SweepForm::setOutputDir(const QString& dir) { out_->setText(dir); }
QString SweepForm::outputDir() const { return out_->text().trimmed(); }
bool SweepForm::resume() const { return resume_->isChecked(); }
void SweepForm::setResume(bool resume) { resume_->setChecked(resume); }

void SweepForm::nextOutputDir() {
  if (out_->text() != default_out_) return;
  default_out_ = defaultOutputDir();
  out_->setText(default_out_);
}
QString SweepForm::error() const { return error_->text(); }

void SweepForm::setAxes(const QList<QPair<QString, QString>>& axes) {
  axes_->setRowCount(0);
  for (const auto& [name, values] : axes) addAxis(name, values);
}

void SweepForm::addAxis(const QString& name, const QString& values) {
  const int row = axes_->rowCount();
  axes_->insertRow(row);
  axes_->setItem(row, 0, new QTableWidgetItem(name));
  axes_->setItem(row, 1, new QTableWidgetItem(values));
}

void SweepForm::browse() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Output directory"), out_->text());
  if (!dir.isEmpty()) out_->setText(dir);
}

void SweepForm::clearError() {
  error_->clear();
  error_->hide();
  if (marked_) marked_->setStyleSheet({});
  marked_ = nullptr;
}

void SweepForm::showError(QWidget* field, const QString& message) {
  error_->setText(message);
  error_->show();
  if (field) {
    field->setStyleSheet(QStringLiteral("border: 1px solid #b00020;"));
    marked_ = field;
  }
}

QWidget* SweepForm::fieldOf(const std::string& message) const {
  if (message.rfind("--grid", 0) == 0) return axes_;
  if (message.rfind("--seeds", 0) == 0) return seeds_;
  if (message.rfind("--baseline", 0) == 0) return baseline_;
  if (message.rfind("--duration", 0) == 0) return duration_;
  if (message.rfind("--scenario", 0) == 0) return scenario_;
  return nullptr;
}

std::optional<SweepSpec> SweepForm::spec() {
  clearError();
  SweepSpec spec;
  try {
    spec.scenario = scenario_->currentText().trimmed().toStdString();
    for (int row = 0; row < axes_->rowCount(); ++row) {
      const QString name = axes_->item(row, 0) ? axes_->item(row, 0)->text().trimmed() : QString();
      const QString values = axes_->item(row, 1) ? axes_->item(row, 1)->text().trimmed() : QString();
      if (name.isEmpty() && values.isEmpty()) continue;  // a row added and left blank
      spec.axes.push_back(SweepSpec::parseGrid((name + '=' + values).toStdString()));
    }
    spec.seeds = SweepSpec::parseSeeds(seeds_->text().trimmed().toStdString());
    if (!baseline_->text().trimmed().isEmpty())
      spec.baseline = SweepSpec::parseBaseline(baseline_->text().trimmed().toStdString());
    if (!duration_->text().trimmed().isEmpty()) {
      bool ok = false;
      const double s = duration_->text().trimmed().toDouble(&ok);
      if (!ok)
        throw InputError("--duration: expected simulated seconds, got '" + duration_->text().toStdString() + "'");
      spec.duration_s = s;
    }
    spec.jobs = static_cast<unsigned>(jobs_->value());
    spec.validate();
  } catch (const InputError& e) {
    std::string message = e.what();
    QWidget* field = fieldOf(message);
    for (const FlagName& f : kFlags)
      if (message.rfind(f.flag, 0) == 0) {
        message = f.label + message.substr(std::char_traits<char>::length(f.flag));
        break;
      }
    showError(field, QString::fromStdString(message));
    return std::nullopt;
  } catch (const std::exception& e) {  // anything else the scenario's loading throws
    showError(scenario_, QString::fromStdString(e.what()));
    return std::nullopt;
  }
  if (outputDir().isEmpty()) {
    showError(out_, tr("Output directory: expected a directory for the runs"));
    return std::nullopt;
  }
  return spec;
}

}  // namespace kvscope
