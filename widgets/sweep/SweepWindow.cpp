#include "widgets/sweep/SweepWindow.h"

#include <QCloseEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "core/model/NumberText.h"
#include "core/sweep/SweepJob.h"
#include "core/sweep/SweepReport.h"
#include "core/sweep/SweepRunner.h"
#include "widgets/sweep/SweepForm.h"
#include "widgets/sweep/SweepPlot.h"
#include "widgets/sweep/SweepTableModel.h"

namespace kvscope {

SweepWindow::SweepWindow(SweepRecorderFactory recorders, QWidget* parent)
    : QMainWindow(parent),
      form_(new SweepForm(this)),
      model_(new SweepTableModel(this)),
      plot_(new SweepPlot(this)),
      table_(new QTableView(this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      run_(new QPushButton(tr("Run"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      timer_(new QTimer(this)),
      recorders_(std::move(recorders)) {
  setWindowTitle(tr("KVScope - Sweep"));
  run_->setObjectName(QStringLiteral("run"));
  cancel_->setObjectName(QStringLiteral("cancel"));
  status_->setObjectName(QStringLiteral("sweepStatus"));
  status_->setWordWrap(true);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  progress_->setFormat(tr("idle"));
  progress_->setTextVisible(true);
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectItems);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addStretch(1);
  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->addWidget(form_);
  left_layout->addLayout(buttons);
  left_layout->addWidget(progress_);
  left_layout->addWidget(status_);
  left_layout->addStretch(1);
  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(table_);
  right->addWidget(plot_);
  right->setStretchFactor(0, 2);
  right->setStretchFactor(1, 3);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  left->setMinimumWidth(460);
  setCentralWidget(split);
  resize(1400, 860);

  connect(run_, &QPushButton::clicked, this, &SweepWindow::start);
  connect(cancel_, &QPushButton::clicked, this, &SweepWindow::cancel);
  connect(table_, &QTableView::doubleClicked, this, &SweepWindow::openCell);
  connect(plot_, &SweepPlot::metricChanged, this,
          [this](const QString& key) { model_->setFocusMetric(key.toStdString()); });
  // The GUI drains the job's staging buffer at 10 Hz: progress is smooth, and a run finishing never
  // reaches the GUI as a cross-thread call.
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &SweepWindow::drain);
  setIdle(true);
  status_->setText(tr("Define the grid and press Run. Double-click a cell to replay that point's median run."));
}

SweepWindow::~SweepWindow() = default;

QString SweepWindow::statusText() const { return status_->text(); }

void SweepWindow::setIdle(bool idle) {
  run_->setEnabled(idle);
  cancel_->setEnabled(!idle);
  form_->setEnabled(idle);
}

bool SweepWindow::start() {
  if (job_) return false;
  const std::optional<SweepSpec> spec = form_->spec();
  if (!spec) {
    status_->setText(tr("Not started: fix the field named above."));
    return false;
  }
  dir_ = form_->outputDir();
  // The table has every grid point from the start; the runs fill it in.
  data_ = SweepData{};
  data_.scenario = spec->scenario;
  data_.points = spec->points();
  data_.seeds = spec->seeds;
  data_.baseline = spec->baselineIndex();
  data_.level = spec->level;
  data_.runs.assign(data_.points.size(), std::vector<std::optional<RunSummary>>(data_.seeds.size()));
  data_.recordings.assign(data_.points.size(), std::vector<std::string>(data_.seeds.size()));
  for (std::size_t p = 0; p < data_.points.size(); ++p)
    for (std::size_t k = 0; k < data_.seeds.size(); ++k)
      data_.recordings[p][k] = SweepRunner::runStem(data_.points[p], data_.seeds[k]) + ".kvrec";
  showSweep();
  job_ = std::make_unique<SweepJob>(*spec, dir_.toStdString(), recorders_, form_->resume());
  setIdle(false);
  progress_->setValue(0);
  progress_->setFormat(tr("starting..."));
  status_->setText(
      tr("Running %1 grid points x %2 seeds into %3").arg(data_.points.size()).arg(data_.seeds.size()).arg(dir_));
  timer_->start();
  return true;
}

void SweepWindow::cancel() {
  if (!job_ || job_->cancelling()) return;
  job_->cancel();
  cancel_->setEnabled(false);
  progress_->setFormat(tr("cancelling..."));
  status_->setText(tr("Cancelling: the running runs stop at their next simulated minute."));
}

void SweepWindow::showSweep() {
  model_->setSweep(data_, dir_);
  plot_->setSweep(model_->data(), model_->analysis());
}

void SweepWindow::drain() {
  if (!job_) return;
  SweepJob::Update update = job_->drain();
  if (update.progress) {
    const SweepProgress& p = *update.progress;
    const double fraction = p.to_run > 0 ? p.work_done / static_cast<double>(p.to_run) : 1.0;
    progress_->setValue(static_cast<int>(std::lround(fraction * 1000)));
    if (!job_->cancelling())
      progress_->setFormat(tr("%1/%2 runs (%3 running, %4 failed) - %p% - ETA %5")
                               .arg(p.finished + p.reused)
                               .arg(p.total)
                               .arg(p.running)
                               .arg(p.failed)
                               .arg(p.eta_s ? QString::fromStdString(clockText(*p.eta_s)) : QStringLiteral("--:--")));
  }
  for (SweepJob::FinishedRun& run : update.runs) data_.runs[run.point][run.seed_index] = std::move(run.summary);
  if (!update.runs.empty()) showSweep();
  if (!update.done) return;

  timer_->stop();
  if (!update.error.empty()) {
    status_->setText(tr("The sweep could not run: %1").arg(QString::fromStdString(update.error)));
    progress_->setFormat(tr("failed"));
  } else if (update.outcome) {
    const SweepOutcome& outcome = *update.outcome;
    data_ = outcome.data;  // the runner's own account, complete
    showSweep();
    const std::size_t total = data_.points.size() * data_.seeds.size();
    if (outcome.cancelled) {
      progress_->setFormat(tr("cancelled"));
      status_->setText(
          tr("Cancelled: %1 of %2 runs done; nothing half-written was kept. Run again with Resume to finish.")
              .arg(outcome.ran + outcome.reused)
              .arg(total));
    } else {
      progress_->setValue(1000);
      progress_->setFormat(tr("done"));
      std::string error;
      const SweepReport report(data_, model_->analysis());
      const bool written = report.writeAll(dir_.toStdString(), &error);
      QString text = tr("Done: %1 runs (%2 reused), %3 failed.")
                         .arg(outcome.ran + outcome.reused)
                         .arg(outcome.reused)
                         .arg(outcome.failed);
      for (const std::string& e : outcome.errors) text += QLatin1Char('\n') + QString::fromStdString(e);
      text += written ? tr(" Wrote summary.md, summary.csv and summary.json in %1").arg(dir_)
                      : QLatin1Char('\n') + QString::fromStdString(error);
      status_->setText(text);
      if (!form_->resume()) form_->nextOutputDir();
    }
  }
  job_.reset();  // the thread has ended: this only joins it
  setIdle(true);
}

void SweepWindow::openCell(const QModelIndex& index) {
  const QString path = index.data(SweepTableModel::RecordingRole).toString();
  if (path.isEmpty()) {
    status_->setText(tr("No run of this point has finished yet."));
    return;
  }
  emit openRecordingRequested(path);
}

void SweepWindow::closeEvent(QCloseEvent* event) {
  // A sweep does not outlive its window: cancel and wait (runs stop within a simulated minute).
  if (job_) {
    job_->cancel();
    job_.reset();
    timer_->stop();
    setIdle(true);
  }
  event->accept();
}

}  // namespace kvscope
