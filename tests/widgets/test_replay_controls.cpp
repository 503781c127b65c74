// The replay bar shows what applies to its source: a served replay's real pace (20x though this
// console never chose it), no scrubber and no "/ 0 s" when the run's span is unknown, no jumps
// without the recording's overview.
#include <QComboBox>
#include <QLabel>
#include <QtTest>

#include "core/source/Source.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"
#include "widgets/timeline/ReplayControlsPanel.h"
#include "widgets/timeline/ReplayScrubber.h"

using namespace kvscope;

namespace {
// A served replay as a remote console sees it: seekable, paced, of unknown length, no overview.
struct ServedReplay : Source {
  SourceStatus st{SourceState::Running, {}, secondsToTime(362), 0, 20, {}};
  std::string description() const override { return "server 127.0.0.1:50051"; }
  SourceCapabilities capabilities() const override { return {true, true, true, false}; }
  void start() override {}
  void stop() override {}
  SourceStatus status() const override { return st; }
};
}  // namespace

class ReplayControlsTest : public QObject {
  Q_OBJECT
 private slots:
  void showsTheServedRunsPaceAndHidesWhatDoesNotApply() {
    ViewState view;
    ReplayControlsPanel panel(view);
    panel.resize(900, 80);
    panel.show();
    ServedReplay source;
    TelemetryStore store;
    panel.setSource(&source);
    panel.refresh(store);
    auto* speed = panel.findChildren<QComboBox*>().front();
    QCOMPARE(speed->currentText(), QStringLiteral("20x"));
    QVERIFY(!panel.scrubber().isVisible());
    bool time_shown = false;
    for (QLabel* l : panel.findChildren<QLabel*>()) {
      QVERIFY2(!l->text().contains("/ 0"), qPrintable(l->text()));
      time_shown |= l->text().contains("362");
    }
    QVERIFY(time_shown);
    // Its span known (a recording served with its end), the scrubber comes back.
    source.st.end = secondsToTime(600);
    source.st.speed = 10;
    panel.refresh(store);
    QVERIFY(panel.scrubber().isVisible());
    QCOMPARE(speed->currentText(), QStringLiteral("10x"));
  }
};

QTEST_MAIN(ReplayControlsTest)
#include "test_replay_controls.moc"
