#pragma once
// File > New sweep...: define a sweep (SweepForm), run it in the background (SweepJob) with
// progress, ETA and Cancel, watch the table (SweepTableModel) and the plot (SweepPlot) fill in as
// runs finish, and double-click a cell to replay that run's recording in the main window. When the
// sweep completes, the same summary.md/csv/json as `kvscope-cli sweep` are written beside the runs.
#include <QMainWindow>

#include <memory>

#include "core/sweep/SweepData.h"
#include "core/sweep/SweepRecorder.h"

class QLabel;
class QModelIndex;
class QProgressBar;
class QPushButton;
class QTableView;
class QTimer;

namespace kvscope {

class SweepForm;
class SweepJob;
class SweepPlot;
class SweepTableModel;

class SweepWindow : public QMainWindow {
  Q_OBJECT
 public:
  // Runs are recorded through `recorders` (the app passes the .kvrec recorder of the backend, which
  // this layer does not see).
  explicit SweepWindow(SweepRecorderFactory recorders, QWidget* parent = nullptr);
  ~SweepWindow() override;

  // Validates the form and starts the sweep; false (the error shown in the form) when invalid.
  bool start();
  void cancel();
  bool running() const { return job_ != nullptr; }

  SweepForm& form() { return *form_; }
  SweepTableModel& model() { return *model_; }
  SweepPlot& plot() { return *plot_; }
  QTableView& table() { return *table_; }
  QProgressBar& progress() { return *progress_; }
  QString statusText() const;

 signals:
  // The user asked to replay this run (a .kvrec path).
  void openRecordingRequested(const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void drain();
  void finish();
  void setIdle(bool idle);
  void showSweep();
  void openCell(const QModelIndex& index);

  SweepForm* form_;
  SweepTableModel* model_;
  SweepPlot* plot_;
  QTableView* table_;
  QProgressBar* progress_;
  QLabel* status_;
  QPushButton* run_;
  QPushButton* cancel_;
  QTimer* timer_;
  SweepRecorderFactory recorders_;
  std::unique_ptr<SweepJob> job_;
  SweepData data_;
  QString dir_;
};

}  // namespace kvscope
