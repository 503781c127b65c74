#pragma once
// The "Runs" dock (live sweeps): a MarkedRunSplitter over the session's drained
// stream fills a MarkedRunTableModel as runs complete, the open run counts its requests as they
// come, and a status line says where the sweep is ("run 3 'k400' running for 42 s · 2 completed").
// The dock stays hidden until the first run marker of a source arrives (simulations have none); a
// new source clears it. Right-click or the button compares against a run; double-click opens a
// run's summary and selects its span in the timeline and charts.
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

#include "core/events/Event.h"

class QDialog;
class QDockWidget;
class QLabel;
class QMainWindow;
class QMenu;
class QModelIndex;
class QPoint;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace kvscope {

class MarkedRunSplitter;
class MarkedRunTableModel;
class RunSession;
class ViewState;
struct MarkedRun;

class RunsDock : public QObject {
  Q_OBJECT
 public:
  RunsDock(QMainWindow& window, RunSession& session, ViewState& view, QMenu& view_menu);
  ~RunsDock() override;

  QDockWidget& dock() const { return *dock_; }
  MarkedRunTableModel& model() const { return *model_; }
  QSortFilterProxyModel& proxy() const { return *proxy_; }
  QTableView& table() const { return *table_; }
  QString statusText() const;

  // The table's (proxy) row as a baseline; a row without a completed run clears it.
  void compareAgainst(const QModelIndex& index);
  // A completed run's summary in a read-only dialog (returned for the tests), its span selected.
  QDialog* showSummary(const QModelIndex& index);

 private:
  // Sees the session's stream after the store: the splitter, and when the open run started.
  struct Feed : EventSink {
    RunsDock* dock = nullptr;
    void onEvent(const Event& e) override;
  };
  // The open run's requests so far (the splitter gives it the run's events).
  struct OpenRunCounter : EventSink {
    long requests = 0, failed = 0;
    void onEvent(const Event& e) override;
  };

  void reset();
  void onFrame();
  double openElapsed() const;  // seconds since the open run's start marker, in tenths
  void onRunEvent(const Event& e);
  void showMenu(const QPoint& pos);
  void updateStatus();
  const MarkedRun* runAt(const QModelIndex& index) const;

  QMainWindow& window_;
  RunSession& session_;
  ViewState& view_;
  QDockWidget* dock_;
  MarkedRunTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QLabel* status_;
  QPushButton* compare_;
  Feed feed_;
  OpenRunCounter counter_;
  std::unique_ptr<MarkedRunSplitter> splitter_;
  std::optional<SimTime> open_since_;  // session time of the open run's start marker
  bool announced_ = false;             // the dock was shown for this source's first marker
};

}  // namespace kvscope
