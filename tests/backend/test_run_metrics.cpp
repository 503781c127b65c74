// `serve --metrics` tells Grafana what `simulate` tells the lab: RunMetrics folded over a real
// simulation renders valid Prometheus text whose counters equal SummaryCollector's numbers, whose
// histograms are cumulative and count the completed requests, and whose labels are escaped.
#include <QtTest>

#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "backend/metrics/RunMetrics.h"
#include "core/run/SimulationRun.h"

using namespace kvscope;

namespace {

using Labels = std::map<std::string, std::string>;

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

// A strict reader of the text format 0.0.4, as far as RunMetrics uses it: HELP then TYPE once per
// family, before its samples; every sample line `name{l="v",...} value`. Fails the test (returns
// false with `why`) on anything else.
struct Exposition {
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;  // family -> counter | gauge | histogram

  bool parse(const std::string& text, std::string* why) {
    std::istringstream in(text);
    std::string line, help_of;
    int n = 0;
    const auto fail = [&](const std::string& what) {
      *why = "line " + std::to_string(n) + ": " + what + ": '" + line + "'";
      return false;
    };
    while (std::getline(in, line)) {
      ++n;
      if (line.empty()) return fail("empty line");
      if (line.rfind("# HELP ", 0) == 0) {
        help_of = line.substr(7, line.find(' ', 7) - 7);
        if (types.count(help_of)) return fail("second HELP for a family");
        continue;
      }
      if (line.rfind("# TYPE ", 0) == 0) {
        std::istringstream t(line.substr(7));
        std::string name, type, rest;
        t >> name >> type;
        if (name != help_of) return fail("TYPE without its HELP just before");
        if (type != "counter" && type != "gauge" && type != "histogram") return fail("unknown type");
        if (type == "counter" && !name.ends_with("_total")) return fail("a counter's name must end in _total");
        if (!name.starts_with("kvscope_")) return fail("not a kvscope_ metric");
        types[name] = type;
        continue;
      }
      if (line[0] == '#') return fail("unexpected comment");
      Sample s;
      std::size_t i = 0;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == ':'))
        ++i;
      s.name = line.substr(0, i);
      if (s.name.empty()) return fail("no metric name");
      if (i < line.size() && line[i] == '{') {
        ++i;
        while (i < line.size() && line[i] != '}') {
          const auto eq = line.find("=\"", i);
          if (eq == std::string::npos) return fail("label without =\"");
          const std::string key = line.substr(i, eq - i);
          std::string value;
          std::size_t j = eq + 2;
          for (; j < line.size() && line[j] != '"'; ++j) {
            if (line[j] == '\\' && j + 1 < line.size()) {
              const char c = line[++j];
              if (c != '\\' && c != '"' && c != 'n') return fail("bad escape in a label value");
              value += c == 'n' ? '\n' : c;
            } else {
              value += line[j];
            }
          }
          if (j >= line.size()) return fail("unterminated label value");
          if (!s.labels.emplace(key, value).second) return fail("repeated label");
          i = j + 1;
          if (i < line.size() && line[i] == ',') ++i;
        }
        if (i >= line.size()) return fail("unterminated label set");
        ++i;
      }
      if (i >= line.size() || line[i] != ' ') return fail("no space before the value");
      const std::string value = line.substr(i + 1);
      if (value.empty() || value.find(' ') != std::string::npos) return fail("not one value (no timestamps expected)");
      if (value == "+Inf")
        s.value = INFINITY;
      else if (value == "NaN")
        s.value = NAN;
      else {
        char* end = nullptr;
        s.value = std::strtod(value.c_str(), &end);
        if (*end != '\0') return fail("value is not a number");
      }
      std::string family = s.name;
      for (const char* suffix : {"_bucket", "_sum", "_count"})
        if (family.ends_with(suffix) && types.count(family.substr(0, family.size() - std::strlen(suffix))) &&
            types[family.substr(0, family.size() - std::strlen(suffix))] == "histogram")
          family = family.substr(0, family.size() - std::strlen(suffix));
      if (family != help_of || !types.count(family)) return fail("sample outside its family's block");
      samples.push_back(std::move(s));
    }
    return true;
  }

  // The value of the one sample with this name and exactly these labels; NaN when absent.
  double value(const std::string& name, const Labels& labels = {}) const {
    for (const auto& s : samples)
      if (s.name == name && s.labels == labels) return s.value;
    return NAN;
  }
  std::vector<const Sample*> all(const std::string& name) const {
    std::vector<const Sample*> out;
    for (const auto& s : samples)
      if (s.name == name) out.push_back(&s);
    return out;
  }
};

Exposition parsed(const RunMetrics& metrics) {
  Exposition x;
  std::string why;
  if (!x.parse(metrics.render(), &why)) qFatal("metrics text does not parse: %s", why.c_str());
  return x;
}

// Buckets ascend in `le`, counts never decrease, +Inf ends them and equals _count.
void checkHistogram(const Exposition& x, const std::string& name, double expected_count) {
  const auto buckets = x.all(name + "_bucket");
  QVERIFY(buckets.size() > 5);
  double previous_le = -1, previous = 0;
  for (const auto* b : buckets) {
    QCOMPARE(b->labels.size(), std::size_t{1});
    const double le = std::strtod(b->labels.at("le").c_str(), nullptr);
    QVERIFY2(le > previous_le, b->labels.at("le").c_str());
    QVERIFY2(b->value >= previous, (name + " le=" + b->labels.at("le") + " is not cumulative").c_str());
    previous_le = le;
    previous = b->value;
  }
  QCOMPARE(buckets.back()->labels.at("le"), std::string("+Inf"));
  QCOMPARE(buckets.back()->value, x.value(name + "_count"));
  QCOMPARE(x.value(name + "_count"), expected_count);
  QVERIFY(x.value(name + "_sum") >= 0);
}

}  // namespace

class TestRunMetrics : public QObject {
  Q_OBJECT
 private slots:
  void countersEqualTheSummary_data() {
    QTest::addColumn<QString>("scenario");
    QTest::newRow("e3-load-floor") << "e3-load-floor";
    QTest::newRow("cascade (dead links, aborts, failures)") << "cascade";
    QTest::newRow("invariant-crash (crashes)") << "invariant-crash";
    QTest::newRow("reseed-storm (reseeds)") << "reseed-storm";
    QTest::newRow("block-level-eviction (thousands of evictions)") << "block-level-eviction";
    QTest::newRow("unified-vs-lmetric (no P)") << "unified-vs-lmetric";
  }
  void countersEqualTheSummary() {
    QFETCH(QString, scenario);
    RunMetrics metrics;
    SimulationOptions o;
    o.duration_s = 1800;
    o.sinks.push_back(&metrics);
    const RunSummary s = runSimulation(Scenario::load(scenario.toStdString()), o);
    const Exposition x = parsed(metrics);
    QVERIFY(s.total > 100);

    QCOMPARE(x.value("kvscope_run_finished"), 1.0);
    const auto info = x.all("kvscope_run_info");
    QCOMPARE(info.size(), std::size_t{1});
    QCOMPARE(info[0]->value, 1.0);
    QCOMPARE(info[0]->labels.at("scenario"), s.scenario);
    QCOMPARE(info[0]->labels.at("policy"), s.policy);
    QCOMPARE(info[0]->labels.at("seed"), std::to_string(s.seed));
    QCOMPARE(x.value("kvscope_requests_total"), double(s.total));
    QCOMPARE(x.value("kvscope_request_failures_total"), double(s.failed));
    QCOMPARE(x.value("kvscope_evictions_total"), double(s.eviction_count));
    QVERIFY(std::abs(x.value("kvscope_evicted_tokens_total") - s.eviction_mean_tokens * double(s.eviction_count)) <
            0.5);
    QCOMPARE(x.value("kvscope_seeds_total"), double(s.seeds));
    QCOMPARE(x.value("kvscope_reseeds_total"), double(s.reseeds));
    QCOMPARE(x.value("kvscope_direct_appends_total"), double(s.direct_appends));
    QCOMPARE(x.value("kvscope_link_dead_total"), double(s.link_dead_events));
    QCOMPARE(x.value("kvscope_aborted_requests_total"), double(s.aborted_requests));
    QCOMPARE(x.value("kvscope_worker_crashes_total"), double(s.worker_crashes));
    QCOMPARE(x.value("kvscope_corrections_total"), double(s.corrections));

    QVERIFY(!s.workers.empty());
    for (const auto& w : s.workers) {
      const Labels labels{{"worker", w.id}, {"role", w.role}};
      QCOMPARE(x.value("kvscope_bindings_total", labels), double(w.bindings));
      QCOMPARE(x.value("kvscope_expired_unreported_total", labels), 0.0);  // a simulation reports every request
      QCOMPARE(x.value("kvscope_prompt_tokens_total", labels) + x.value("kvscope_generation_tokens_total", labels),
               double(w.tokens_served));
      // The last snapshot's gauges, for every worker, consistent with each other.
      const double used = x.value("kvscope_num_used_tokens", labels);
      const double capacity = x.value("kvscope_kv_capacity_tokens", labels);
      QVERIFY2(!std::isnan(used) && capacity > 0, w.id.c_str());
      QVERIFY(std::abs(x.value("kvscope_token_usage", labels) - used / capacity) < 1e-12);
      for (const char* gauge :
           {"kvscope_kv_peak_tokens", "kvscope_num_running_reqs", "kvscope_num_queue_reqs", "kvscope_resident_sessions",
            "kvscope_bound_sessions", "kvscope_pending_seeds", "kvscope_worker_up"})
        QVERIFY2(x.value(gauge, labels) >= 0, (std::string(gauge) + " of " + w.id).c_str());
    }
    // The lab's metrics: APC and its ceilings, the classes, the offer, from the same events.
    double queries = 0, hits = 0;
    for (const auto& w : s.workers) {
      const Labels labels{{"worker", w.id}, {"role", w.role}};
      queries += x.value("kvscope_prefix_cache_queries_total", labels);
      hits += x.value("kvscope_prefix_cache_hits_total", labels);
    }
    QVERIFY(s.lab.apc && queries > 0);
    QVERIFY(std::abs(hits / queries - *s.lab.apc) < 1e-12);
    QVERIFY(std::abs(x.value("kvscope_prefix_cache_ceiling_hits_total", {{"scope", "any"}}) / queries -
                     *s.lab.apc_ceiling_any) < 1e-12);
    QVERIFY(std::abs(x.value("kvscope_prefix_cache_ceiling_hits_total", {{"scope", "intra"}}) / queries -
                     *s.lab.apc_ceiling_intra) < 1e-12);
    for (const char* c : {"WARM", "MEDIUM", "HEAVY"})
      QCOMPARE(x.value("kvscope_requests_by_class_total", {{"class", c}}), double(s.lab.request_classes.at(c).count));
    QVERIFY(s.lab.completion_rate);
    QVERIFY(std::abs(double(s.completed) / x.value("kvscope_offered_requests") - *s.lab.completion_rate) < 1e-12);
    checkHistogram(x, "kvscope_time_per_output_token_seconds", double(s.lab.tpot_s->count));
    if (QTest::currentTestFailed()) return;
    checkHistogram(x, "kvscope_dispatch_slip_seconds", double(s.total));
    if (QTest::currentTestFailed()) return;
    // Nothing labelled with a worker the summary does not know.
    QCOMPARE(x.all("kvscope_bindings_total").size(), s.workers.size());

    checkHistogram(x, "kvscope_e2e_request_latency_seconds", double(s.completed));
    if (QTest::currentTestFailed()) return;
    checkHistogram(x, "kvscope_time_to_first_token_seconds", double(s.ttft_s.count));
    if (QTest::currentTestFailed()) return;
    QVERIFY(std::abs(x.value("kvscope_e2e_request_latency_seconds_sum") - s.e2e_s.mean * double(s.e2e_s.count)) <
            1e-6 * double(s.e2e_s.count) + 1e-9);

    // Disaggregated runs have links between every P and every D.
    const auto links = x.all("kvscope_link_state");
    if (scenario == "unified-vs-lmetric") {
      QVERIFY(links.empty());
    } else {
      QVERIFY(!links.empty());
      std::set<std::string> prefill;
      for (const auto* l : links) {
        QVERIFY(l->labels.at("prefill").starts_with("P"));
        QVERIFY(l->labels.at("worker").starts_with("D"));
        QVERIFY(l->value >= 0 && l->value <= 2);
        prefill.insert(l->labels.at("prefill"));
      }
      QCOMPARE(links.size(), prefill.size() * s.workers.size());
    }
  }

  // `le` is inclusive, values past the last bound land only in +Inf, and failed requests are counted
  // as failures but observed in neither histogram (as the summary's percentiles ignore them).
  void histogramBoundariesAndFailures() {
    RunMetrics metrics;
    RunStarted run;
    run.workers.push_back({"D0", WorkerRole::Decode, 1000});
    metrics.onEvent({1, 0, run});
    const auto done = [&](std::uint64_t seq, double ttft_s, double e2e_s, RequestStatus status) {
      RequestDone d;
      d.worker = 0;
      d.ttft = secondsToTime(ttft_s);
      d.e2e = secondsToTime(e2e_s);
      d.status = status;
      metrics.onEvent({seq, secondsToTime(10), d});
    };
    done(2, 0.5, 1, RequestStatus::Ok);      // exactly on bounds 0.5 and 1
    done(3, 1000, 1000, RequestStatus::Ok);  // past every bound
    done(4, 0.001, 0.3, RequestStatus::Failed);
    const Exposition x = parsed(metrics);
    QCOMPARE(x.value("kvscope_e2e_request_latency_seconds_bucket", {{"le", "0.8"}}), 0.0);
    QCOMPARE(x.value("kvscope_e2e_request_latency_seconds_bucket", {{"le", "1"}}), 1.0);
    QCOMPARE(x.value("kvscope_e2e_request_latency_seconds_bucket", {{"le", "600"}}), 1.0);
    QCOMPARE(x.value("kvscope_e2e_request_latency_seconds_bucket", {{"le", "+Inf"}}), 2.0);
    QCOMPARE(x.value("kvscope_time_to_first_token_seconds_bucket", {{"le", "0.25"}}), 0.0);
    QCOMPARE(x.value("kvscope_time_to_first_token_seconds_bucket", {{"le", "0.5"}}), 1.0);
    QCOMPARE(x.value("kvscope_e2e_request_latency_seconds_sum"), 1001.0);
    QCOMPARE(x.value("kvscope_requests_total"), 3.0);
    QCOMPARE(x.value("kvscope_request_failures_total"), 1.0);
    // No snapshot yet: per-worker counters exist, gauges do not.
    QCOMPARE(x.value("kvscope_bindings_total", {{"worker", "D0"}, {"role", "decode"}}), 0.0);
    QVERIFY(x.all("kvscope_num_used_tokens").empty());
    QCOMPARE(x.value("kvscope_run_finished"), 0.0);
  }

  // Scenario names come from files: quotes, backslashes and newlines must not break the format.
  void labelValuesAreEscaped() {
    RunMetrics metrics;
    RunStarted run;
    run.scenario = "my \"lab\" run\\v2\nsecond line";
    run.policy = "kv-aware";
    run.workers.push_back({"D\"0", WorkerRole::Decode, 1000});
    metrics.onEvent({1, 0, run});
    Snapshot snap;
    snap.workers.push_back({0, 250, 1000, 300, 1, 2, 3, 4, 0, true});
    metrics.onEvent({2, secondsToTime(5), snap});
    const Exposition x = parsed(metrics);
    QCOMPARE(x.all("kvscope_run_info").at(0)->labels.at("scenario"), run.scenario);
    QCOMPARE(x.value("kvscope_token_usage", {{"worker", "D\"0"}, {"role", "decode"}}), 0.25);
    QCOMPARE(x.value("kvscope_sim_time_seconds"), 5.0);
  }

  // Every RunStarted begins a new run: counters restart from zero (Prometheus sees a reset).
  void aNewRunResetsTheCounters() {
    RunMetrics metrics;
    RunStarted run;
    run.workers.push_back({"D0", WorkerRole::Decode, 1000});
    metrics.onEvent({1, 0, run});
    metrics.onEvent({2, 10, Eviction{0, 7, 100}});
    QCOMPARE(parsed(metrics).value("kvscope_evictions_total"), 1.0);
    metrics.onEvent({3, 0, run});
    QCOMPARE(parsed(metrics).value("kvscope_evictions_total"), 0.0);
    QCOMPARE(parsed(metrics).value("kvscope_evicted_tokens_total"), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestRunMetrics)
#include "test_run_metrics.moc"
