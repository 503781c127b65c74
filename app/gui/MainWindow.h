#pragma once
// The console's window: menus, the status bar (source, state, time, speed) and the wiring of the
// run session to the panels. Panels live in PanelDocks, source choices in SourceMenu.
#include <QLabel>
#include <QMainWindow>

#include <memory>

namespace kvscope {

class PanelDocks;
class RunSession;
class RunsDock;
class Source;
class SourceMenu;
class SweepWindow;
class ViewState;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void openSource(std::unique_ptr<Source> source);
  RunSession& session() { return *session_; }
  PanelDocks& docks() { return *docks_; }
  RunsDock& runs() { return *runs_; }
  ViewState& view() { return *view_; }
  QString statusText() const { return status_->text(); }

  void togglePause();
  // File > New sweep...: one Sweep window, raised when already open; its cells replay here.
  SweepWindow& showSweepWindow();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void onFrame();
  void updateStatus();
  void buildMenus();

  ViewState* view_;
  RunSession* session_;
  PanelDocks* docks_ = nullptr;
  RunsDock* runs_ = nullptr;
  SourceMenu* source_menu_ = nullptr;
  SweepWindow* sweep_ = nullptr;
  QLabel* status_;
  QLabel* counters_;
};

}  // namespace kvscope
