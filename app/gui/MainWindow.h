#pragma once
// The console's window: menus, the status bar (source, state, time, speed) and the wiring of the
// run session to the panels. Panels live in PanelDocks, source choices in SourceMenu.
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QPushButton>
#include <QSize>
#include <QStringList>

#include <memory>

namespace kvscope {

class CompareActions;
class TwinRunActions;
class FindingAlert;
class SessionRecorder;
class PanelDocks;
class PreviewController;
class RunSession;
class RunsDock;
class Source;
class SourceMenu;
class SweepWindow;
class ViewState;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // Saved: the user's window geometry and dock layout from the last session, when there is one.
  enum class Layout { Saved, Default };
  explicit MainWindow(Layout layout = Layout::Default, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Shows the window: the saved geometry and layout, or (first start, or Layout::Default) the
  // screen's available size, maximized, with the default layout; a screenshot size wins over both.
  void showAtStart();
  void setScreenshotSize(QSize size) { screenshot_size_ = size; }
  void resetLayout();  // View > Reset layout
  // The window's geometry and docks, with the panels they place, for the next showAtStart.
  void saveLayout() const;
  void goToTime();  // View > Go to time: asks for a time and centres every time view on it

  void openSource(std::unique_ptr<Source> source);
  RunSession& session() { return *session_; }
  PanelDocks& docks() { return *docks_; }
  RunsDock& runs() { return *runs_; }
  ViewState& view() { return *view_; }
  PreviewController& preview() { return *preview_; }
  FindingAlert& findingAlert() { return *alert_; }
  SessionRecorder& sessionRecorder() { return *recorder_; }
  CompareActions& compare() { return *compare_; }
  TwinRunActions& twin() { return *twin_; }
  const QPushButton& notLiveBar() const { return *not_live_; }
  const QPushButton& pauseOffer() const { return *pause_offer_; }
  QString statusText() const { return status_->text(); }

  void togglePause();
  // File > New sweep...: one Sweep window, raised when already open; its cells replay here.
  SweepWindow& showSweepWindow();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fitRestoredLayout(const QRect& room);
  static QStringList panelIds();  // every panel of PanelRegistry, in its order
  void onFrame();
  void offerPause(const QString& text);
  void addRecordingAction(QMenu& file);
  void updateStatus();
  void buildMenus();

  ViewState* view_;
  RunSession* session_;
  PanelDocks* docks_ = nullptr;
  RunsDock* runs_ = nullptr;
  SourceMenu* source_menu_ = nullptr;
  SweepWindow* sweep_ = nullptr;
  PreviewController* preview_ = nullptr;
  QLabel* status_;
  QLabel* counters_;
  QPushButton* not_live_;
  QPushButton* pause_offer_;
  FindingAlert* alert_ = nullptr;
  SessionRecorder* recorder_ = nullptr;
  CompareActions* compare_ = nullptr;
  TwinRunActions* twin_ = nullptr;
  Layout layout_;
  QSize screenshot_size_;
  bool screenshot_ = false;
  bool layout_restored_ = false;  // the user's saved layout is in place: never replaced on show
  bool shown_once_ = false;
};

}  // namespace kvscope
