// `calibrate profile` without the CLI: scheduler logs of a worker whose speed is
// known (support/ProfileLogs.h, upstream's line format) must give back its constants within 5 %; a log
// that cannot separate two constants must say so and keep the base profile's values; no usable decode
// line is an error; the real-format fixture lines in tests/data give the sample counts python's own
// reading of them gives (counted with re over the files, not with KVScope).
#include <QtTest>

#include <QTemporaryDir>
#include <cmath>
#include <fstream>

#include "core/calibration/ProfileCalibration.h"
#include "core/calibration/ProfileSamples.h"
#include "core/model/Error.h"
#include "core/scenario/HardwareProfile.h"
#include "tests/support/BuildTree.h"
#include "tests/support/ProfileLogs.h"

using namespace kvscope;
using kvscope::test::ProfileLogOptions;
using kvscope::test::TrueProfile;

namespace {

void feed(ProfileSamples& s, const std::vector<std::string>& lines, const std::string& file) {
  for (const auto& l : lines) s.addLine(l, file);
}

const ConstantFit& get(const CalibrationResult& r, const char* key) {
  const ConstantFit* c = r.find(key);
  if (!c) qFatal("no constant %s", key);
  return *c;
}

bool hasWarning(const ConstantFit& c, const char* words) {
  for (const auto& w : c.warnings)
    if (w.find(words) != std::string::npos) return true;
  return false;
}

QString describe(const ConstantFit& c) {
  QString s = QString::fromStdString(c.key) + " = " + QString::number(c.value, 'g', 6) + " (estimate " +
              QString::number(c.estimate, 'g', 6) + ", se " + QString::number(c.std_error, 'g', 3) + ", R^2 " +
              QString::number(c.quality.r2, 'g', 4) + ", n " + QString::number(c.quality.samples) + ")";
  for (const auto& w : c.warnings) s += "\n    " + QString::fromStdString(w);
  return s;
}

// Within `tol` (relative) of `truth`, fitted, and printed (the numbers docs/calibration.md quotes).
void checkRecovered(const CalibrationResult& r, const char* key, double truth, double tol = 0.05) {
  const ConstantFit& c = get(r, key);
  qInfo().noquote() << describe(c) << " true" << truth << " error"
                    << QString::number(100 * (c.value - truth) / truth, 'f', 2) + "%";
  QVERIFY2(c.fitted, qPrintable(describe(c)));
  QVERIFY2(std::fabs(c.value - truth) <= tol * truth, qPrintable(describe(c) + " vs true " + QString::number(truth)));
}

CalibrationInputs inputsNamed(std::vector<std::string> logs) {
  CalibrationInputs in;
  in.logs = std::move(logs);
  in.name = "test";
  return in;
}

}  // namespace

class TestCalibrateProfile : public QObject {
  Q_OBJECT
 private slots:
  // A decode worker and a prefill worker of disaggregation, 1500 lines each, 5 % noise.
  void recoversTheConstants() {
    const TrueProfile truth;
    const ProfileLogOptions o;
    ProfileSamples s;
    feed(s, test::decodeLog(truth, o), "d0.log");
    feed(s, test::prefillLog(truth, o), "p0.log");
    const HardwareProfile base = HardwareProfile::load("h200");
    const CalibrationResult r = ProfileCalibration::fit(s, base, inputsNamed({"d0.log", "p0.log"}));
    QCOMPARE(r.decode.lines, 1500L);
    QCOMPARE(r.decode.used, 1500L);
    QCOMPARE(r.prefill_method, PrefillMethod::InputThroughput);
    QCOMPARE(r.prefill.lines, 1500L);
    QCOMPARE(r.prefill.pairs, 1499L);  // the first line's throughput is 0.00: no gap
    checkRecovered(r, "decode_iteration_base_s", truth.base_s);
    checkRecovered(r, "decode_iteration_per_request_s", truth.per_request_s);
    checkRecovered(r, "decode_iteration_per_context_token_s", truth.per_token_s);
    checkRecovered(r, "prefill_tokens_per_s", truth.prefill_tokens_per_s);
    checkRecovered(r, "prefill_overhead_s", truth.prefill_overhead_s);
    const ConstantFit& b = get(r, "decode_iteration_base_s");
    QVERIFY2(b.quality.r2 > 0.9, qPrintable(describe(b)));
    QVERIFY2(b.std_error > 0 && b.std_error < 0.05 * b.value, qPrintable(describe(b)));
    QVERIFY2(b.warnings.empty(), qPrintable(describe(b)));
    // Only the saturated gaps (#queue-req > 0 before) are used: the idle ones would bias the fit.
    QVERIFY(r.prefill_samples_used < r.prefill.pairs);
    QVERIFY(r.prefill_samples_used > 1200);
    // No scrapes: the bandwidth is the base profile's, and says so.
    const ConstantFit& bw = get(r, "link_bandwidth_bytes_per_s");
    QVERIFY(!bw.fitted);
    QCOMPARE(bw.value, base.link_bandwidth_bytes_per_s);
    QVERIFY2(hasWarning(bw, "no --metrics given"), qPrintable(describe(bw)));
    QCOMPARE(r.profile.decode_iteration_base_s, b.value);
    QCOMPARE(r.profile.kv_bytes_per_token, base.kv_bytes_per_token);  // not fitted: the base's
  }

  // A unified worker's prefill lines carry no input throughput: the time between the lines
  // (millisecond timestamps) gives the batch time.
  void prefillFromLineTimes() {
    const TrueProfile truth;
    ProfileLogOptions o;
    o.prefill_throughput = false;
    ProfileSamples s;
    feed(s, test::decodeLog(truth, o), "d0.log");
    feed(s, test::prefillLog(truth, o), "u0.log");
    const CalibrationResult r =
        ProfileCalibration::fit(s, HardwareProfile::load("h200"), inputsNamed({"d0.log", "u0.log"}));
    QCOMPARE(r.prefill_method, PrefillMethod::LineGapsMs);
    QCOMPARE(r.prefill.with_throughput, 0L);
    checkRecovered(r, "prefill_tokens_per_s", truth.prefill_tokens_per_s);
    checkRecovered(r, "prefill_overhead_s", truth.prefill_overhead_s);
  }

  // No input throughput and whole-second times (SGLang's default logging): gaps are summed over
  // windows of >= 10 s of consecutive saturated batches. The rate is still found (within 5 % here);
  // the overhead is not pinned down as well, and both carry the whole-seconds warning.
  void prefillFromWholeSeconds() {
    const TrueProfile truth;
    ProfileLogOptions o;
    o.prefill_throughput = false;
    o.millis = false;
    o.queued_share = 1.0;
    o.prefill_lines = 3000;
    ProfileSamples s;
    feed(s, test::decodeLog(truth, o), "d0.log");
    feed(s, test::prefillLog(truth, o), "u0.log");
    const CalibrationResult r =
        ProfileCalibration::fit(s, HardwareProfile::load("h200"), inputsNamed({"d0.log", "u0.log"}));
    QCOMPARE(r.prefill_method, PrefillMethod::LineGapsSeconds);
    checkRecovered(r, "prefill_tokens_per_s", truth.prefill_tokens_per_s);
    const ConstantFit& over = get(r, "prefill_overhead_s");
    qInfo().noquote() << describe(over);
    QVERIFY2(hasWarning(over, "whole seconds"), qPrintable(describe(over)));
    QVERIFY2(hasWarning(get(r, "prefill_tokens_per_s"), "whole seconds"), qPrintable(describe(over)));
    QVERIFY(r.prefill_samples_used > 50);
  }

  // Every batch has 32 running requests: base and per-request cannot be separated. They keep the
  // base profile's values with a warning; the per-token term (whose regressor does vary) is fitted.
  void constantBatchSizeWarns() {
    const TrueProfile truth;
    ProfileLogOptions o;
    o.fixed_running = 32;
    o.prefill_lines = 0;
    ProfileSamples s;
    feed(s, test::decodeLog(truth, o), "d0.log");
    const HardwareProfile base = HardwareProfile::load("h200");
    const CalibrationResult r = ProfileCalibration::fit(s, base, inputsNamed({"d0.log"}));
    for (const char* key : {"decode_iteration_base_s", "decode_iteration_per_request_s"}) {
      const ConstantFit& c = get(r, key);
      QVERIFY2(!c.fitted, qPrintable(describe(c)));
      QVERIFY2(hasWarning(c, "all 1500 lines have #running-req = 32"), qPrintable(describe(c)));
      QVERIFY2(hasWarning(c, "cannot be separated"), qPrintable(describe(c)));
    }
    QCOMPARE(r.profile.decode_iteration_base_s, base.decode_iteration_base_s);
    QCOMPARE(r.profile.decode_iteration_per_request_s, base.decode_iteration_per_request_s);
    checkRecovered(r, "decode_iteration_per_context_token_s", truth.per_token_s);
    // No prefill lines: both prefill constants are the base's, warned.
    QVERIFY(hasWarning(get(r, "prefill_tokens_per_s"), "no Prefill batch lines"));
    QCOMPARE(r.profile.prefill_tokens_per_s, base.prefill_tokens_per_s);
    // The table shows the warning.
    const std::string table = ProfileCalibration::table(r);
    QVERIFY2(table.find("cannot be separated") != std::string::npos, table.c_str());
  }

  // Few lines: fitted, but warned as too few.
  void fewSamplesWarn() {
    ProfileLogOptions o;
    o.decode_lines = 12;
    o.prefill_lines = 0;
    ProfileSamples s;
    feed(s, test::decodeLog(TrueProfile{}, o), "d0.log");
    const CalibrationResult r = ProfileCalibration::fit(s, HardwareProfile::load("h200"), inputsNamed({"d0.log"}));
    QVERIFY(hasWarning(get(r, "decode_iteration_base_s"), "only 12 samples"));
  }

  // Only prefill lines, or decode lines with nothing running: no decode fit, an error naming the files.
  void noDecodeLinesIsAnError() {
    ProfileLogOptions o;
    o.decode_lines = 0;
    ProfileSamples s;
    feed(s, test::prefillLog(TrueProfile{}, o), "p0.log");
    s.addLine(
        "[2024-10-21 14:03:12 TP1] Decode batch. #running-req: 0, #token: 0, token usage: 0.00, gen throughput "
        "(token/s): 0.00, #queue-req: 0",
        "p0.log");
    try {
      ProfileCalibration::fit(s, HardwareProfile::load("h200"), inputsNamed({"p0.log"}));
      QFAIL("no error");
    } catch (const InputError& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("no `Decode batch` lines with a running request and a generation throughput in p0.log: cannot "
                         "fit the decode iteration time") != std::string::npos,
               e.what());
      QVERIFY2(what.find("1 with 0 running requests") != std::string::npos, e.what());
    }
    // A file that is not there.
    CalibrationInputs in = inputsNamed({"no-such-dir/d9.log"});
    QVERIFY_THROWS_EXCEPTION(InputError, ProfileCalibration::run(in));
  }

  // tests/data/upstream_logs/sglang_scheduler.log: one line per upstream format and version. Counted
  // independently (python re over the file): 15 Decode batch lines, 13 usable, 1 with 0 running, 1
  // speculative (accept len); 11 Prefill batch lines, 8 with input throughput.
  void upstreamFormatLines() {
    ProfileSamples s;
    s.addLogFile(test::testDataPath("upstream_logs/sglang_scheduler.log"));
    QCOMPARE(s.decodeCounts().lines, 15L);
    QCOMPARE(s.decodeCounts().used, 13L);
    QCOMPARE(s.decodeCounts().no_running, 1L);
    QCOMPARE(s.decodeCounts().speculative, 1L);
    CalibrationInputs in = inputsNamed({test::testDataPath("upstream_logs/sglang_scheduler.log")});
    const CalibrationResult r = ProfileCalibration::run(in);
    QCOMPARE(r.prefill.lines, 11L);
    QCOMPARE(r.prefill.with_throughput, 8L);
    const ConstantFit& b = get(r, "decode_iteration_base_s");
    QCOMPARE(b.quality.samples + r.decode_outliers, 13L);
    QVERIFY2(hasWarning(b, "only"), qPrintable(describe(b)));  // 13 lines of many workers: warned, whatever it fitted
  }

  // tests/data/import_run (make_logs.py's 10-minute run, upstream's formats, made-up values): 785
  // Decode batch lines of D0-D2, all usable; P0's 601 Prefill batch lines all print input throughput
  // and give 600 gaps, 460 of them after a line with #queue-req > 0 (python re over the files).
  void importRunLogs() {
    CalibrationInputs in;
    for (const char* f : {"import_run/d0.log", "import_run/d1.log", "import_run/d2.log", "import_run/p0.log"})
      in.logs.push_back(test::testDataPath(f));
    const CalibrationResult r = ProfileCalibration::run(in);
    QCOMPARE(r.decode.lines, 785L);
    QCOMPARE(r.decode.used, 785L);
    QCOMPARE(r.prefill_method, PrefillMethod::InputThroughput);
    QCOMPARE(r.prefill.lines, 601L);
    QCOMPARE(r.prefill.pairs, 600L);
    QCOMPARE(r.prefill.saturated_pairs, 460L);
    for (const auto& c : r.constants) qInfo().noquote() << describe(c);
    QCOMPARE(get(r, "decode_iteration_base_s").quality.samples + r.decode_outliers, 785L);
  }

  // Saved scrapes: the kv_transfer_speed_gb_s histogram's growth gives the mean speed; the gauge of
  // older SGLang gives one value per transfer.
  void bandwidthFromScrapes() {
    ProfileSamples s;
    feed(s, test::decodeLog(TrueProfile{}, ProfileLogOptions{}), "d0.log");
    auto scrape = [](double sum, double count) {
      return "# TYPE sglang:kv_transfer_speed_gb_s histogram\n"
             "sglang:kv_transfer_speed_gb_s_bucket{engine_type=\"prefill\",model_name=\"m\",tp_rank=\"0\",le=\"+Inf\"}"
             " " +
             QString::number(count).toStdString() + "\n" +
             "sglang:kv_transfer_speed_gb_s_sum{engine_type=\"prefill\",model_name=\"m\",tp_rank=\"0\"} " +
             QString::number(sum).toStdString() + "\n" +
             "sglang:kv_transfer_speed_gb_s_count{engine_type=\"prefill\",model_name=\"m\",tp_rank=\"0\"} " +
             QString::number(count).toStdString() + "\n";
    };
    s.addScrape("P0", scrape(100, 10));  // before: not counted
    s.addScrape("P0", scrape(250, 40));  // +30 transfers, +150 GB/s summed
    s.addScrape("P0", scrape(100, 20));  // restarted: 20 new transfers, 100 summed
    CalibrationInputs in = inputsNamed({"d0.log"});
    in.metrics = {{"P0", "p0.prom"}};
    const CalibrationResult r = ProfileCalibration::fit(s, HardwareProfile::load("h200"), in);
    const ConstantFit& bw = get(r, "link_bandwidth_bytes_per_s");
    QVERIFY2(bw.fitted, qPrintable(describe(bw)));
    QCOMPARE(bw.quality.samples, 50L);
    // GB/s is upstream's bytes / 2^30 per second (req_time_stats.py).
    QVERIFY2(std::fabs(bw.value - 250.0 / 50 * 1073741824.0) < 1, qPrintable(describe(bw)));

    ProfileSamples g;
    feed(g, test::decodeLog(TrueProfile{}, ProfileLogOptions{}), "d0.log");
    for (double v : {2.0, 2.0, 3.0, 0.0, 4.0})
      g.addScrape(
          "P0",
          "# TYPE sglang:kv_transfer_speed_gb_s gauge\nsglang:kv_transfer_speed_gb_s{model_name=\"m\",tp_rank=\"0\"} " +
              QString::number(v).toStdString() + "\n");
    const CalibrationResult rg = ProfileCalibration::fit(g, HardwareProfile::load("h200"), in);
    const ConstantFit& gw = get(rg, "link_bandwidth_bytes_per_s");
    QCOMPARE(gw.quality.samples, 3L);  // 2, 3, 4: a repeat and a 0 are no new transfer
    QVERIFY2(std::fabs(gw.value - 3 * 1073741824.0) < 1, qPrintable(describe(gw)));
  }

  // The written file is a profile HardwareProfile::load accepts; "calibration" must be an object.
  void outputLoads() {
    ProfileLogOptions o;
    ProfileSamples s;
    feed(s, test::decodeLog(TrueProfile{}, o), "d0.log");
    feed(s, test::prefillLog(TrueProfile{}, o), "p0.log");
    CalibrationInputs in = inputsNamed({"d0.log", "p0.log"});
    const CalibrationResult r = ProfileCalibration::fit(s, HardwareProfile::load("h20"), in);
    QCOMPARE(r.base.name, std::string("h20"));
    QTemporaryDir dir;
    const std::string path = dir.filePath("cal.json").toStdString();
    const auto j = ProfileCalibration::toJson(r, in);
    std::ofstream(path) << j.dump(2);
    const HardwareProfile p = HardwareProfile::load(path);
    QCOMPARE(p.name, std::string("test"));
    QCOMPARE(p.decode_iteration_base_s, r.profile.decode_iteration_base_s);
    QCOMPARE(p.prefill_tokens_per_s, r.profile.prefill_tokens_per_s);
    QCOMPARE(p.max_running_requests, HardwareProfile::load("h20").max_running_requests);
    const auto& c = j["calibration"]["constants"]["decode_iteration_per_request_s"];
    for (const char* k : {"value", "r2", "residual_sd", "samples", "std_error", "warnings", "source"})
      QVERIFY2(c.contains(k), k);
    QVERIFY(c["r2"].get<double>() > 0.9);
    auto bad = j;
    bad["calibration"] = 5;
    std::ofstream(path) << bad.dump(2);
    QVERIFY_THROWS_EXCEPTION(InputError, HardwareProfile::load(path));
    bad = j;
    bad["calibrated"] = true;
    std::ofstream(path) << bad.dump(2);
    QVERIFY_THROWS_EXCEPTION(InputError, HardwareProfile::load(path));
  }
};

QTEST_GUILESS_MAIN(TestCalibrateProfile)
#include "test_calibrate_profile.moc"
