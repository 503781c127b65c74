// The knobs panel: inline validation against the registry sends nothing while a field is invalid;
// Apply sends every edit in one call, shows it pending until the run acknowledges (on any thread),
// keeps the edit on a refusal; Revert restores; a frame never overwrites a field being edited.
#include <QSignalSpy>
#include <QWheelEvent>
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include <cmath>
#include <thread>

#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/source/Source.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"
#include "widgets/knobs/KnobSlider.h"
#include "widgets/knobs/KnobsPanel.h"

using namespace kvscope;

namespace {

// A test double of core's Source and its run's controls: records every knob and policy call and
// lets the test answer it later.
class RecordingSource : public Source, public RunControl {
 public:
  using KnobsDone = RunControl::Done;
  explicit RecordingSource(bool takes_knobs = true) : takes_knobs_(takes_knobs) {}
  std::string description() const override { return "recording run.kvrec"; }
  SourceCapabilities capabilities() const override {
    SourceCapabilities c;
    c.knobs = takes_knobs_;
    return c;
  }
  void start() override {}
  void stop() override {}
  SourceStatus status() const override { return {}; }
  RunControl* control() const override { return const_cast<RecordingSource*>(this); }

  bool canChangeKnobs() const override { return takes_knobs_; }
  void applyKnobs(std::map<std::string, double> changes, ChangeAuthor, KnobsDone done) override {
    ++apply_calls;
    last_knobs = std::move(changes);
    knobs_done = std::move(done);
  }
  void setPolicy(std::string name, ChangeAuthor, KnobsDone done) override {
    ++policy_calls;
    last_policy = std::move(name);
    policy_done = std::move(done);
  }
  // Answers from another thread, as a simulation or a gRPC completion queue does.
  static void answerFromWorker(const KnobsDone& done, bool ok, const std::string& error) {
    std::thread worker([&] { done({ok, error, {}}); });
    worker.join();
  }
  void pause(ChangeAuthor) override {}
  void resume(ChangeAuthor) override {}
  void setSpeed(double, ChangeAuthor) override {}
  bool canSeek() const override { return false; }
  bool seek(SimTime, ChangeAuthor, std::string*) override { return false; }
  SimTime endTime() const override { return 0; }
  bool paused() const override { return false; }
  double speed() const override { return 1; }
  SimTime simTime() const override { return 0; }

  int apply_calls = 0;
  int policy_calls = 0;
  std::map<std::string, double> last_knobs;
  std::string last_policy;
  KnobsDone knobs_done, policy_done;

 private:
  bool takes_knobs_;
};

// A store as a run leaves it right after starting: every knob at its default, K as E3 starts.
void startRun(TelemetryStore& store, double k = 0) {
  RunStarted run;
  run.scenario = "e3-load-floor";
  run.policy = "kv-aware";
  run.workers = {{"D0"}, {"D1"}, {"D2"}};
  for (const KnobSpec& s : KnobRegistry::specs()) run.knobs.emplace_back(std::string(s.name), s.default_value);
  for (auto& [name, value] : run.knobs)
    if (name == "K") value = k;
  store.ingest(Event{1, 0, run});
}

void knobChanged(TelemetryStore& store, const std::string& name, double from, double to) {
  store.ingest(Event{store.lastSeq() + 1, store.now() + 1000, KnobChanged{name, from, to, "test", {}}});
}

struct Fixture {
  ViewState view;
  TelemetryStore store;
  RecordingSource source;
  KnobsPanel panel{view};
  Fixture() {
    startRun(store);
    panel.setSource(&source);
    panel.refresh(store);
  }
  QLineEdit* field(const QString& knob) { return panel.findChild<QLineEdit*>(QStringLiteral("knob:") + knob); }
  QLabel* message(const QString& knob) { return panel.findChild<QLabel*>(QStringLiteral("message:") + knob); }
  QPushButton* apply() { return panel.findChild<QPushButton*>(QStringLiteral("apply")); }
  QPushButton* revert() { return panel.findChild<QPushButton*>(QStringLiteral("revert")); }
  QString status() { return panel.findChild<QLabel*>(QStringLiteral("status"))->text(); }
  QComboBox* policy() { return panel.findChild<QComboBox*>(QStringLiteral("policy")); }
  // Types as an operator does: replaces the text, one key at a time (textEdited fires).
  void type(const QString& knob, const QString& text) {
    QLineEdit* f = field(knob);
    f->setFocus();
    f->selectAll();
    QTest::keyClick(f, Qt::Key_Backspace);
    QTest::keyClicks(f, text);
  }
};

}  // namespace

class TestKnobsPanel : public QObject {
  Q_OBJECT

  static QString state(QLineEdit* field) { return field->property("knobState").toString(); }

 private slots:
  // Every numeric knob has a slider on its registry range, logarithmic where the range spans
  // decades; moving it edits the same pending value as the field, and typing moves the slider.
  void slidersEditTheSamePendingValue() {
    Fixture f;
    for (const KnobSpec& s : KnobRegistry::specs()) {
      const QString name = QString::fromUtf8(s.name.data(), static_cast<qsizetype>(s.name.size()));
      auto* slider = f.panel.findChild<KnobSlider*>(QStringLiteral("slider:") + name);
      QVERIFY2(slider, qPrintable(name));
      QCOMPARE(slider->valueAt(0), s.min);
      QCOMPARE(slider->valueAt(KnobSlider::kSteps), s.max);
      const double low = s.min > 0 ? s.min : (s.integer ? 1.0 : s.max * 1e-4);
      QCOMPARE(slider->logarithmic(), s.max / low >= 100);
    }
    auto* k = f.panel.findChild<KnobSlider*>(QStringLiteral("slider:K"));
    QVERIFY(k->logarithmic());  // 0 to 10,000: 1, 10, 100 and 1,000 each get their share of the track
    QVERIFY(std::abs(k->valueAt(k->positionOf(200)) - 200) / 200 < 0.02);
    k->triggerAction(QAbstractSlider::SliderPageStepAdd);  // as a click on the track
    const QString after = f.field("K")->text();
    QCOMPARE(after, KnobEditModel::formatValue(k->valueAt(k->sliderPosition())));
    QCOMPARE(f.panel.edits().edits().knobs.at("K"), after.toDouble());
    // Typing moves the slider.
    f.type("rho", "0.5");
    auto* rho_slider = f.panel.findChild<KnobSlider*>(QStringLiteral("slider:rho"));
    QCOMPARE(rho_slider->value(), rho_slider->positionOf(0.5));
  }

  void showsEveryRegistryKnob() {
    Fixture f;
    for (const KnobSpec& s : KnobRegistry::specs()) {
      const QString name = QString::fromUtf8(s.name.data(), static_cast<qsizetype>(s.name.size()));
      QLineEdit* field = f.field(name);
      QVERIFY2(field, qPrintable(name));
      QCOMPARE(field->text(), QString::number(s.default_value, 'g', 12));
      QVERIFY(field->toolTip().contains(QString::fromUtf8(s.unit.data(), static_cast<qsizetype>(s.unit.size()))));
      QVERIFY(field->toolTip().contains(
          QString::fromUtf8(s.description.data(), static_cast<qsizetype>(s.description.size())).toHtmlEscaped()));
      QVERIFY(!field->isReadOnly());
    }
    for (std::string_view p : policyNames())
      QVERIFY(f.policy()->findText(QString::fromUtf8(p.data(), static_cast<qsizetype>(p.size()))) >= 0);
    QCOMPARE(f.policy()->currentText(), QStringLiteral("kv-aware"));
    QVERIFY(!f.apply()->isEnabled());
  }

  // The filter box lists only the knobs whose name, description or unit hold its text; a group
  // with none is hidden; an edited knob stays listed; cleared, every knob is back.
  void theFilterListsTheKnobsThatMatch() {
    Fixture f;
    f.panel.resize(420, 900);
    f.panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    auto* filter = f.panel.findChild<QLineEdit*>(QStringLiteral("knobFilter"));
    QVERIFY(filter);
    const int all = static_cast<int>(KnobRegistry::specs().size());
    QCOMPARE(f.panel.listedKnobs(), all);
    QTest::keyClicks(filter, QStringLiteral("SOFT_cap"));
    QVERIFY(f.field("session_soft_cap")->isVisible());
    QVERIFY(!f.field("K")->isVisible());
    QVERIFY(f.panel.listedKnobs() >= 1 && f.panel.listedKnobs() < all);
    filter->clear();
    f.type("K", "300");
    filter->setText(QStringLiteral("soft_cap"));
    QVERIFY(f.field("K")->isVisible());  // edited: never hidden
    filter->clear();
    QCOMPARE(f.panel.listedKnobs(), all);
    QVERIFY(f.field("rho")->isVisible());
  }

  void invalidInputSendsNothing_data() {
    QTest::addColumn<QString>("knob");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("why");
    QTest::newRow("K negative") << "K"
                                << "-5"
                                << "out of range";
    QTest::newRow("K far too large") << "K"
                                     << "1e9"
                                     << "out of range";
    QTest::newRow("K not a number") << "K"
                                    << "two hundred"
                                    << "expected a number";
    QTest::newRow("K empty") << "K"
                             << ""
                             << "expected a number";
    QTest::newRow("K trailing junk") << "K"
                                     << "200x"
                                     << "expected a number";
    QTest::newRow("soft cap not whole") << "session_soft_cap"
                                        << "2.5"
                                        << "whole number";
    QTest::newRow("rho above one") << "rho"
                                   << "1.5"
                                   << "out of range";
  }
  void invalidInputSendsNothing() {
    QFETCH(QString, knob);
    QFETCH(QString, text);
    QFETCH(QString, why);
    Fixture f;
    f.type(knob, text);
    QCOMPARE(state(f.field(knob)), QStringLiteral("invalid"));
    QVERIFY(f.message(knob)->isVisibleTo(&f.panel));
    QVERIFY2(f.message(knob)->text().contains(why), qPrintable(f.message(knob)->text()));
    QVERIFY(!f.apply()->isEnabled());
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    QTest::keyClick(f.field(knob), Qt::Key_Return);  // Enter in a field sends nothing either
    QCoreApplication::processEvents();
    QCOMPARE(f.source.apply_calls, 0);
    QCOMPARE(f.source.policy_calls, 0);
  }

  void oneInvalidFieldBlocksTheWholeChange() {
    Fixture f;
    f.type("K", "200");
    f.type("rho", "0");  // below its 0.1 minimum
    QVERIFY(!f.apply()->isEnabled());
    QTest::keyClick(f.field("rho"), Qt::Key_Return);
    QCOMPARE(f.source.apply_calls, 0);
    f.type("rho", "0.9");
    QVERIFY(f.apply()->isEnabled());
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    QCOMPARE(f.source.apply_calls, 1);
    QCOMPARE(f.source.last_knobs, (std::map<std::string, double>{{"K", 200}, {"rho", 0.9}}));
  }

  // Enter ends an edit without sending it (what it changes is previewed; Apply sends); Space types
  // nothing into a number (it is the console's pause); Esc leaves the field and keeps the edit.
  void enterEscapeAndSpaceInAField() {
    Fixture f;
    f.panel.show();
    QVERIFY(QTest::qWaitForWindowActive(&f.panel));
    QSignalSpy finished(&f.panel, &KnobsPanel::editFinished);
    f.type("K", "200");
    QCOMPARE(finished.count(), 0);  // typing: the preview waits for a pause
    QTest::keyClick(f.field("K"), Qt::Key_Return);
    QCOMPARE(f.source.apply_calls, 0);
    QCOMPARE(state(f.field("K")), QStringLiteral("edited"));
    QVERIFY(QApplication::focusWidget() != f.field("K"));
    QCOMPARE(finished.count(), 1);  // a preview is asked for at once
    f.field("K")->setFocus();
    QTest::keyClick(f.field("K"), Qt::Key_Space);
    QCOMPARE(f.field("K")->text(), QStringLiteral("200"));
    QTest::keyClick(f.field("K"), Qt::Key_Escape);
    QVERIFY(QApplication::focusWidget() != f.field("K"));
    QCOMPARE(state(f.field("K")), QStringLiteral("edited"));
    f.view.setRange(0, secondsToTime(10));  // reading a window in the past, as a finding shows it
    QVERIFY(!f.view.followLive());
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    QCOMPARE(f.source.apply_calls, 1);
    QVERIFY(f.view.followLive());  // Apply returns the charts to now, where the change acts
  }

  // A slider's drag edits the knob as it moves and finishes on its release (the preview starts then,
  // not after a typing pause).
  void aSliderDragFinishesOnItsRelease() {
    Fixture f;
    f.panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&f.panel));
    auto* slider = f.panel.findChild<KnobSlider*>(QStringLiteral("slider:K"));
    QVERIFY(slider);
    QSignalSpy finished(&f.panel, &KnobsPanel::editFinished);
    slider->setSliderDown(true);
    slider->setSliderPosition((slider->minimum() + slider->maximum()) / 2);
    QCOMPARE(state(f.field("K")), QStringLiteral("edited"));
    QVERIFY(f.panel.sliderHeld());
    QCOMPARE(finished.count(), 0);
    slider->setSliderDown(false);
    QCOMPARE(finished.count(), 1);
    QVERIFY(!f.panel.sliderHeld());
  }

  // The wheel over a slider the operator has not focused scrolls the list; it edits nothing.
  void wheelEditsOnlyAFocusedSlider() {
    Fixture f;
    f.panel.show();
    QVERIFY(QTest::qWaitForWindowActive(&f.panel));
    auto* slider = f.panel.findChild<KnobSlider*>(QStringLiteral("slider:K"));
    QVERIFY(slider);
    const QString before = f.field("K")->text();
    auto wheel = [&] {
      const QPointF at(slider->width() / 2.0, slider->height() / 2.0);
      QWheelEvent e(at, slider->mapToGlobal(at), {}, QPoint(0, 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                    false);
      QCoreApplication::sendEvent(slider, &e);
    };
    wheel();
    QCOMPARE(f.field("K")->text(), before);
    QCOMPARE(state(f.field("K")), QStringLiteral("current"));
    slider->setFocus();
    wheel();
    QVERIFY(f.field("K")->text() != before);
  }

  // Values a slider chooses are round: two significant digits on a log scale, 1-2-5 steps on a
  // linear one; the range's ends stay exact.
  void slidersChooseRoundValues() {
    for (const KnobSpec& s : KnobRegistry::specs()) {
      KnobSlider slider(s);
      for (int p = 1; p < KnobSlider::kSteps; p += 7) {
        const double v = slider.valueAt(p);
        if (v <= s.min || v >= s.max || v == 0) continue;
        double step = std::pow(10.0, std::floor(std::log10(std::abs(v))) - 1);  // two digits
        if (!slider.logarithmic()) {  // the 1-2-5 step at or above a 200th of the range
          const double raw = (s.max - s.min) / 200, decade = std::pow(10.0, std::floor(std::log10(raw)));
          step = raw <= decade * (1 + 1e-9)       ? decade
                 : raw <= 2 * decade * (1 + 1e-9) ? 2 * decade
                 : raw <= 5 * decade * (1 + 1e-9) ? 5 * decade
                                                  : 10 * decade;
          if (s.integer) step = std::max(step, 1.0);
        }
        const bool round = std::abs(v / step - std::round(v / step)) < 1e-6;
        QVERIFY2(round, qPrintable(QString::fromStdString(std::string(s.name)) + " " + KnobEditModel::formatValue(v)));
      }
    }
  }

  void validKIsPendingUntilAcknowledged() {
    Fixture f;
    f.type("K", "200");
    QCOMPARE(state(f.field("K")), QStringLiteral("edited"));
    QVERIFY(f.apply()->isEnabled());
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    QCOMPARE(f.source.apply_calls, 1);
    QCOMPARE(f.source.last_knobs, (std::map<std::string, double>{{"K", 200}}));
    QCOMPARE(f.source.policy_calls, 0);

    QCOMPARE(state(f.field("K")), QStringLiteral("pending"));
    QVERIFY(f.status().contains(QStringLiteral("Pending: K = 200")));
    QVERIFY(!f.apply()->isEnabled());  // one change in flight at a time
    // Frames go on while the run has not answered: still pending, still showing what was sent.
    f.store.ingest(Event{2, 500, RunFinished{}});
    f.panel.refresh(f.store);
    QCOMPARE(f.field("K")->text(), QStringLiteral("200"));
    QCOMPARE(state(f.field("K")), QStringLiteral("pending"));

    RecordingSource::answerFromWorker(f.source.knobs_done, true, {});
    QTRY_COMPARE(state(f.field("K")), QStringLiteral("current"));
    QVERIFY(!f.status().contains(QStringLiteral("Pending")));
    QVERIFY(f.status().contains(QStringLiteral("Applied: K = 200")));
    // Acknowledged but not yet in the store: the field does not flick back to the old value.
    f.panel.refresh(f.store);
    QCOMPARE(f.field("K")->text(), QStringLiteral("200"));
    // Then the store's value (the KnobChanged event) takes over, including a later change by others.
    knobChanged(f.store, "K", 0, 200);
    f.panel.refresh(f.store);
    QCOMPARE(f.field("K")->text(), QStringLiteral("200"));
    knobChanged(f.store, "K", 200, 50);
    f.panel.refresh(f.store);
    QCOMPARE(f.field("K")->text(), QStringLiteral("50"));
    QCOMPARE(f.source.apply_calls, 1);
  }

  void refusalShowsTheErrorAndKeepsTheEdit() {
    Fixture f;
    f.type("K", "200");
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    RecordingSource::answerFromWorker(f.source.knobs_done, false, "the run is finished");
    QTRY_VERIFY(f.status().contains(QStringLiteral("the run is finished")));
    QCOMPARE(f.field("K")->text(), QStringLiteral("200"));
    QCOMPARE(state(f.field("K")), QStringLiteral("edited"));
    QVERIFY(f.apply()->isEnabled());  // the operator can try again
    f.panel.refresh(f.store);
    QCOMPARE(f.field("K")->text(), QStringLiteral("200"));
  }

  void revertRestoresTheRunsValues() {
    Fixture f;
    f.type("K", "200");
    f.type("rho", "abc");
    f.policy()->setCurrentIndex(f.policy()->findText(QStringLiteral("lmetric")));
    emit f.policy()->activated(f.policy()->currentIndex());
    QVERIFY(f.revert()->isEnabled());
    QTest::mouseClick(f.revert(), Qt::LeftButton);
    QCOMPARE(f.field("K")->text(), QStringLiteral("0"));
    QCOMPARE(f.field("rho")->text(), QStringLiteral("0.95"));
    QCOMPARE(state(f.field("K")), QStringLiteral("current"));
    QCOMPARE(state(f.field("rho")), QStringLiteral("current"));
    QVERIFY(!f.message(QStringLiteral("rho"))->isVisibleTo(&f.panel));
    QCOMPARE(f.policy()->currentText(), QStringLiteral("kv-aware"));
    QVERIFY(!f.apply()->isEnabled());
    QVERIFY(!f.revert()->isEnabled());
    QCOMPARE(f.source.apply_calls, 0);
  }

  void aFrameNeverOverwritesAFieldBeingEdited() {
    Fixture f;
    f.type("K", "150");
    knobChanged(f.store, "K", 0, 300);
    knobChanged(f.store, "sticky_bonus", 100, 42);
    f.panel.refresh(f.store);
    QCOMPARE(f.field("K")->text(), QStringLiteral("150"));
    QCOMPARE(state(f.field("K")), QStringLiteral("edited"));
    QCOMPARE(f.field("sticky_bonus")->text(), QStringLiteral("42"));
    // Focused but not yet typed in: left alone too, until the focus leaves.
    f.panel.show();
    QVERIFY(QTest::qWaitForWindowActive(&f.panel));
    f.field("epsilon")->setFocus();
    QTRY_VERIFY(f.field("epsilon")->hasFocus());
    knobChanged(f.store, "epsilon", 100, 7);
    f.panel.refresh(f.store);
    QCOMPARE(f.field("epsilon")->text(), QStringLiteral("100"));
    // Once the operator leaves it, the field shows the run's value without waiting for a change.
    f.field("K")->setFocus();
    QTRY_COMPARE(f.field("epsilon")->text(), QStringLiteral("7"));
    // Typing a value the run already has, in another spelling, is no edit and keeps the spelling.
    f.type("rho", "0.950");
    QCOMPARE(state(f.field("rho")), QStringLiteral("current"));
    QCOMPARE(f.field("rho")->text(), QStringLiteral("0.950"));
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    QCOMPARE(f.source.last_knobs, (std::map<std::string, double>{{"K", 150}}));
  }

  void policyFollowsTheKnobsOnlyIfTheyWereTaken_data() {
    QTest::addColumn<bool>("knobs_accepted");
    QTest::newRow("accepted") << true;
    QTest::newRow("refused") << false;
  }
  void policyFollowsTheKnobsOnlyIfTheyWereTaken() {
    QFETCH(bool, knobs_accepted);
    Fixture f;
    f.type("K", "200");
    f.policy()->setCurrentIndex(f.policy()->findText(QStringLiteral("exclusive-overlap")));
    emit f.policy()->activated(f.policy()->currentIndex());
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    QCOMPARE(f.source.apply_calls, 1);
    QCOMPARE(f.source.policy_calls, 0);
    RecordingSource::answerFromWorker(f.source.knobs_done, knobs_accepted, knobs_accepted ? "" : "no");
    if (!knobs_accepted) {
      QTRY_VERIFY(f.status().contains(QStringLiteral("Refused")));
      QCOMPARE(f.source.policy_calls, 0);
      QCOMPARE(f.policy()->currentText(), QStringLiteral("exclusive-overlap"));  // kept as an edit
      return;
    }
    QTRY_COMPARE(f.source.policy_calls, 1);
    QCOMPARE(f.source.last_policy, std::string("exclusive-overlap"));
    QVERIFY(f.status().contains(QStringLiteral("Pending")));
    RecordingSource::answerFromWorker(f.source.policy_done, true, {});
    QTRY_VERIFY(!f.status().contains(QStringLiteral("Pending")));
    QCOMPARE(f.policy()->currentText(), QStringLiteral("exclusive-overlap"));
  }

  void readOnlyWithoutKnobCapability() {
    ViewState view;
    TelemetryStore store;
    startRun(store, 200);
    RecordingSource recording(/*takes_knobs=*/false);
    KnobsPanel panel(view);
    panel.setSource(&recording);
    panel.refresh(store);
    auto* note = panel.findChild<QLabel*>(QStringLiteral("sourceNote"));
    QVERIFY(note->isVisibleTo(&panel));
    QVERIFY(note->text().contains(QStringLiteral("recording run.kvrec")));
    auto* k = panel.findChild<QLineEdit*>(QStringLiteral("knob:K"));
    QCOMPARE(k->text(), QStringLiteral("200"));  // the recorded values are still shown
    QVERIFY(k->isReadOnly());
    QVERIFY(!panel.findChild<QComboBox*>(QStringLiteral("policy"))->isEnabled());
    QVERIFY(!panel.findChild<QPushButton*>(QStringLiteral("apply"))->isEnabled());
    QTest::keyClick(k, Qt::Key_Return);
    QCOMPARE(recording.apply_calls, 0);

    panel.setSource(nullptr);
    QVERIFY(note->isVisibleTo(&panel));
    QVERIFY(k->isReadOnly());
  }

  void lateAnswersAreDropped() {
    // The panel closes, or the source is replaced, before the run answers: nothing crashes and
    // the old answer does not touch the new state.
    RecordingSource::KnobsDone orphan;
    {
      Fixture f;
      f.type("K", "200");
      QTest::mouseClick(f.apply(), Qt::LeftButton);
      orphan = f.source.knobs_done;
    }
    RecordingSource::answerFromWorker(orphan, true, {});
    QTest::qWait(20);

    Fixture f;
    f.type("K", "200");
    QTest::mouseClick(f.apply(), Qt::LeftButton);
    RecordingSource next;
    f.panel.setSource(&next);
    RecordingSource::answerFromWorker(f.source.knobs_done, false, "stale");
    QTest::qWait(20);
    QVERIFY(!f.status().contains(QStringLiteral("stale")));
    QCOMPARE(state(f.field("K")), QStringLiteral("current"));
  }
};

QTEST_MAIN(TestKnobsPanel)
#include "test_knobs_panel.moc"
