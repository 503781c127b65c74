// The twin's state kept two ways must give the same event stream, byte for byte: every bundled
// scenario (up to 600 simulated seconds) and the real traces of tests/data, run with the router's
// per-block prefix index (PrefixIndex + SessionPrefixCache) and with the per-run one (ChainIndex).
// On a difference the first differing event is named (seq, kind and both lines).
#include <QtTest>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/events/EventJson.h"
#include "core/run/WorkloadFactory.h"
#include "core/sim/ClusterSimulator.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;

namespace {

std::vector<std::string> streamOf(const Scenario& s, const std::string& trace, TwinOptions options) {
  struct Dump : EventSink {
    std::vector<std::string> lines;
    void onEvent(const Event& e) override { lines.push_back(eventToJson(e).dump()); }
  } dump;
  const std::uint64_t seed = s.seed;
  ClusterSimulator sim(s, buildWorkload(s, seed, trace), seed, options);
  sim.addSink(&dump);
  sim.start();
  sim.run();
  sim.finish(true);
  return std::move(dump.lines);
}

void compare(const Scenario& s, const std::string& trace) {
  const auto per_block = streamOf(s, trace, TwinOptions{Router::IndexKind::PerBlock});
  const auto per_run = streamOf(s, trace, TwinOptions{Router::IndexKind::Chain});
  QVERIFY(per_block.size() > 100);
  const auto [a, b] = std::mismatch(per_block.begin(), per_block.end(), per_run.begin(), per_run.end());
  if (a != per_block.end() || b != per_run.end()) {
    const auto at = a - per_block.begin();
    QFAIL(qPrintable(QString("streams differ at event %1 of %2/%3:\n  per block: %4\n  per run:   %5")
                         .arg(at)
                         .arg(per_block.size())
                         .arg(per_run.size())
                         .arg(a == per_block.end() ? "(end)" : QString::fromStdString(a->substr(0, 400)))
                         .arg(b == per_run.end() ? "(end)" : QString::fromStdString(b->substr(0, 400)))));
  }
  qInfo() << s.name.c_str() << per_block.size() << "events identical";
}

}  // namespace

class TestTwinEquivalence : public QObject {
  Q_OBJECT
 private slots:
  void everyBundledScenario_data() {
    QTest::addColumn<QString>("scenario");
    for (const auto& name : Scenario::bundledNames()) QTest::newRow(name.c_str()) << QString::fromStdString(name);
  }
  void everyBundledScenario() {
    QFETCH(QString, scenario);
    Scenario s = Scenario::load(scenario.toStdString());
    s.duration_s = std::min(s.duration_s, 600.0);
    compare(s, {});
  }

  // Traces whose block ids come from the trace itself (Mooncake's hash_ids) rather than the
  // simulator's chained hashes.
  void realTraces_data() {
    QTest::addColumn<QString>("trace");
    QTest::newRow("mooncake conversation") << "/traces/conversation_trace_600.jsonl";
    QTest::newRow("mooncake synthetic") << "/traces/synthetic_trace_600.jsonl";
    QTest::newRow("agentic sessions") << "/traces/kv-cache-tester";
    QTest::newRow("azure code") << "/traces/AzureLLMInferenceTrace_code_600.csv";
  }
  void realTraces() {
    QFETCH(QString, trace);
    Scenario s = Scenario::load("e3-load-floor");
    s.duration_s = 600;
    compare(s, kvscope::test::testDataDir() + trace.toStdString());
  }
};

QTEST_APPLESS_MAIN(TestTwinEquivalence)
#include "test_twin_equivalence.moc"
