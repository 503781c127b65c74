// `kvscope-cli calibrate profile`, end to end with the real binary: scheduler logs of a worker whose
// speed is known (support/ProfileLogs.h: upstream's line format) written to a temporary folder; the
// profile it writes must load as a HardwareProfile and hold the constants; bad input exits 1 (a
// missing file, no decode line) or 2 (bad --metrics) with a message and writes nothing.
#include <QtTest>

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <cmath>

#include "core/scenario/HardwareProfile.h"
#include "tests/support/BuildTree.h"
#include "tests/support/CliRunner.h"
#include "tests/support/ProfileLogs.h"

using namespace kvscope::test;

namespace {

QString writeLines(const QTemporaryDir& dir, const QString& name, const std::vector<std::string>& lines) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  for (const auto& l : lines) f.write(QByteArray::fromStdString(l + "\n"));
  return path;
}

}  // namespace

class TestCliCalibrateProfile : public QObject {
  Q_OBJECT
 private slots:
  void writesALoadableProfile() {
    QTemporaryDir dir;
    const TrueProfile truth;
    const ProfileLogOptions o;
    const QString d0 = writeLines(dir, "d0.log", decodeLog(truth, o));
    const QString p0 = writeLines(dir, "p0.log", prefillLog(truth, o));
    const QString out = dir.filePath("lab.json");
    RUN_EXPECT(cal, 0, QStringList{"calibrate", "profile", d0, p0, "--base", "h20", "-o", out});
    // The table: a header and one row per constant, the base's value beside the fitted one.
    QVERIFY2(cal.out.contains("constant") && cal.out.contains("base value") && cal.out.contains("R^2"),
             cal.out.constData());
    QVERIFY2(cal.out.contains("decode_iteration_per_request_s") && cal.out.contains("prefill_tokens_per_s"),
             cal.out.constData());
    QVERIFY2(cal.out.contains("no --metrics given"), cal.out.constData());
    QVERIFY2(cal.out.contains("1500 Decode batch (1500 used"), cal.out.constData());
    QVERIFY(!QFileInfo::exists(dir.filePath(".lab.json.partial")));
    const kvscope::HardwareProfile p = kvscope::HardwareProfile::load(out.toStdString());
    const kvscope::HardwareProfile h20 = kvscope::HardwareProfile::load("h20");
    QCOMPARE(p.name, std::string("lab"));
    QVERIFY2(std::fabs(p.decode_iteration_base_s - truth.base_s) < 0.05 * truth.base_s,
             qPrintable(QString::number(p.decode_iteration_base_s)));
    QVERIFY2(std::fabs(p.decode_iteration_per_request_s - truth.per_request_s) < 0.05 * truth.per_request_s,
             qPrintable(QString::number(p.decode_iteration_per_request_s)));
    QVERIFY2(std::fabs(p.prefill_tokens_per_s - truth.prefill_tokens_per_s) < 0.05 * truth.prefill_tokens_per_s,
             qPrintable(QString::number(p.prefill_tokens_per_s)));
    QCOMPARE(p.link_bandwidth_bytes_per_s, h20.link_bandwidth_bytes_per_s);  // not fitted: --base's
    QCOMPARE(p.decode_kv_pool_tokens, h20.decode_kv_pool_tokens);
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject cal_obj = QJsonDocument::fromJson(f.readAll()).object().value("calibration").toObject();
    QCOMPARE(cal_obj.value("base").toString(), QString("h20"));
    const QJsonObject c = cal_obj.value("constants").toObject().value("decode_iteration_base_s").toObject();
    QCOMPARE(c.value("samples").toInt(), 1500 - cal_obj.value("decode_lines").toObject().value("outliers").toInt());
    QVERIFY(c.value("r2").toDouble() > 0.9);
    QVERIFY(c.value("std_error").toDouble() > 0);
    QCOMPARE(cal_obj.value("prefill_lines").toObject().value("method").toString(), QString("input_throughput"));
  }

  // --metrics: saved scrapes (a time line before each /metrics answer) of a prefill worker whose
  // kv_transfer_speed_gb_s histogram grows by 40 transfers and 120 GB/s summed: 3 GiB/s.
  void bandwidthFromSavedScrapes() {
    QTemporaryDir dir;
    const QString d0 = writeLines(dir, "d0.log", decodeLog(TrueProfile{}, ProfileLogOptions{}));
    std::vector<std::string> prom;
    const std::pair<int, int> scrapes[] = {{30, 10}, {90, 30}, {150, 50}};
    int second = 0;
    for (const auto& [sum, count] : scrapes) {
      prom.push_back("2026-08-20 09:00:0" + std::to_string(second++));
      prom.push_back("# TYPE sglang:kv_transfer_speed_gb_s histogram");
      const std::string labels = "engine_type=\"prefill\",model_name=\"m\",tp_rank=\"0\"";
      prom.push_back("sglang:kv_transfer_speed_gb_s_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(count));
      prom.push_back("sglang:kv_transfer_speed_gb_s_sum{" + labels + "} " + std::to_string(sum));
      prom.push_back("sglang:kv_transfer_speed_gb_s_count{" + labels + "} " + std::to_string(count));
    }
    const QString p0 = writeLines(dir, "p0.prom", prom);
    const QString out = dir.filePath("bw.json");
    RUN_EXPECT(cal, 0, QStringList{"calibrate", "profile", d0, "--metrics", "P0=" + p0, "-o", out});
    const kvscope::HardwareProfile p = kvscope::HardwareProfile::load(out.toStdString());
    QVERIFY2(std::fabs(p.link_bandwidth_bytes_per_s - 3.0 * 1073741824.0) < 1,
             qPrintable(QString::number(p.link_bandwidth_bytes_per_s)));
    RUN_EXPECT(gone, 1,
               QStringList{"calibrate", "profile", d0, "--metrics", "P0=" + dir.filePath("none.prom"), "-o", out});
    QVERIFY2(gone.err.contains("none.prom"), gone.err.constData());
  }

  void badInputWritesNothing() {
    QTemporaryDir dir;
    ProfileLogOptions o;
    o.decode_lines = 0;
    const QString p0 = writeLines(dir, "p0.log", prefillLog(TrueProfile{}, o));
    const QString out = dir.filePath("out.json");
    const QString missing = dir.filePath("d7.log");
    RUN_EXPECT(gone, 1, QStringList{"calibrate", "profile", p0, missing, "-o", out});
    QVERIFY2(gone.err.contains(missing.toUtf8()) && gone.err.contains("no such log file"), gone.err.constData());
    RUN_EXPECT(nodecode, 1, QStringList{"calibrate", "profile", p0, "-o", out});
    QVERIFY2(nodecode.err.contains("no `Decode batch` lines with a running request and a generation throughput in"),
             nodecode.err.constData());
    QVERIFY2(nodecode.err.contains(p0.toUtf8()), nodecode.err.constData());
    RUN_EXPECT(metrics, 2, QStringList{"calibrate", "profile", p0, "--metrics", "p0.prom", "-o", out});
    QVERIFY2(metrics.err.contains("expected WORKER=SCRAPES"), metrics.err.constData());
    RUN_EXPECT(group, 2, QStringList{"calibrate"});
    RUN_EXPECT(help, 0, QStringList{"calibrate", "profile", "--help"});
    QVERIFY(help.out.contains("--metrics"));
    QVERIFY(!QFileInfo::exists(out));
    QVERIFY(!QFileInfo::exists(dir.filePath(".out.json.partial")));
    // An existing output is left as it was.
    QFile keep(out);
    QVERIFY(keep.open(QIODevice::WriteOnly));
    keep.write("old\n");
    keep.close();
    RUN_EXPECT(again, 1, QStringList{"calibrate", "profile", p0, "-o", out});
    QFile check(out);
    QVERIFY(check.open(QIODevice::ReadOnly));
    QCOMPARE(check.readAll(), QByteArray("old\n"));
  }

  // `calibrate model`: a profile's pools from a model's config.json. The written profile loads, keeps
  // --base's timings and records the derivation; every flag changes what it should.
  void modelProfileFromConfig() {
    QTemporaryDir dir;
    const QString config =
        QString::fromStdString(testDataPath("fixtures/models/qwen3-coder-30b-a3b-instruct.config.json"));
    const QString out = dir.filePath("q.json");
    RUN_EXPECT(
        m, 0,
        QStringList{"calibrate", "model", config, "--gpu", "h200", "--engine", "sglang", "--decode-fraction", "0.8",
                    "--prefill-fraction", "0.7", "--context-gib", "0.5", "--base", "h200", "--name", "q30", "-o", out});
    QVERIFY2(m.out.contains("98304 bytes") && m.out.contains("30.53 B parameters"), m.out.constData());
    const kvscope::HardwareProfile p = kvscope::HardwareProfile::load(out.toStdString());
    const kvscope::HardwareProfile h200 = kvscope::HardwareProfile::load("h200");
    QCOMPARE(p.name, std::string("q30"));
    QCOMPARE(p.kv_bytes_per_token, 98304.0);
    QCOMPARE(p.decode_kv_pool_tokens, 601299L);  // 0.8 x 139.90 GiB - 56.87 GiB, / 96 KiB
    QCOMPARE(p.prefill_kv_pool_tokens, 448489L);
    QCOMPARE(p.decode_iteration_base_s, h200.decode_iteration_base_s);
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject model = QJsonDocument::fromJson(f.readAll()).object().value("model").toObject();
    QCOMPARE(model.value("engine").toString(), QString("sglang"));
    QCOMPARE(model.value("parameters").toDouble(), 30532122624.0);
    QVERIFY(model.value("decode").toObject().value("formula").toString().contains("mem_fraction_static 0.80"));
    // vLLM's rule on an H20 given by its memory, an fp8 KV cache, TP 2 and an explicit dtype.
    const QString v = dir.filePath("v.json");
    RUN_EXPECT(vm, 0,
               QStringList{"calibrate",
                           "model",
                           config,
                           "--gpu-memory-mib",
                           "97871",
                           "--engine",
                           "vllm",
                           "--decode-fraction",
                           "0.9",
                           "--reserved-gib",
                           "2",
                           "--kv-dtype",
                           "fp8",
                           "--dtype",
                           "bfloat16",
                           "--tp",
                           "2",
                           "--base",
                           "vllm-h20",
                           "-o",
                           v});
    const kvscope::HardwareProfile vp = kvscope::HardwareProfile::load(v.toStdString());
    QCOMPARE(vp.kv_bytes_per_token, 48.0 * 2 * 128 * 2 * 1);      // 2 of 4 KV heads a GPU, 1 byte
    QVERIFY(vp.decode_kv_pool_tokens > p.decode_kv_pool_tokens);  // half the weights a GPU, half the KV
    // What cannot work says so and writes nothing.
    const QString bad = dir.filePath("bad.json");
    RUN_EXPECT(gpu, 2, QStringList{"calibrate", "model", config, "--gpu", "tpu9", "-o", bad});
    QVERIFY2(gpu.err.contains("--gpu-memory-mib"), gpu.err.constData());
    RUN_EXPECT(small, 1, QStringList{"calibrate", "model", config, "--gpu-memory-mib", "40000", "-o", bad});
    QVERIFY2(small.err.contains("leave no KV pool"), small.err.constData());
    RUN_EXPECT(missing, 1, QStringList{"calibrate", "model", dir.filePath("none.json"), "-o", bad});
    QVERIFY(!QFileInfo::exists(bad));
  }
};

QTEST_GUILESS_MAIN(TestCliCalibrateProfile)
#include "test_cli_calibrate_profile.moc"
