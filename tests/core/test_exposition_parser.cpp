// The Prometheus text parser on the real published fixtures (SGLang's docs sample, vLLM's truncated
// sample) and on malformed variants: every problem names its line and field and what was expected,
// and no input makes it throw.
#include <QtTest>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "core/live/ExpositionParser.h"
#include "tests/support/Fixtures.h"

using namespace kvscope;
using kvscope::test::fixture;

namespace {

QString problems(const Exposition& e) {
  QStringList out;
  for (const auto& p : e.problems) out << QString::fromStdString(p.message());
  return out.join('\n');
}

}  // namespace

class TestExpositionParser : public QObject {
  Q_OBJECT
 private slots:
  void sglangFixture() {
    const std::string body = fixture("sglang_metrics_sample.txt");
    QVERIFY(!body.empty());
    const Exposition e = ExpositionParser().parse(body);
    QVERIFY2(e.ok(), qPrintable(problems(e)));
    QCOMPARE(e.lines, 115L);
    QCOMPARE(e.families.size(), std::size_t(12));
    const MetricFamily* usage = e.find("sglang:token_usage");
    QVERIFY(usage);
    QCOMPARE(usage->type, MetricType::Gauge);
    QCOMPARE(usage->help, std::string("The token usage"));
    QCOMPARE(usage->samples.size(), std::size_t(1));
    QCOMPARE(usage->samples[0].value, 0.28);
    QCOMPARE(*usage->samples[0].label("model_name"), std::string("meta-llama/Llama-3.1-8B-Instruct"));
    const MetricFamily* ttft = e.find("sglang:time_to_first_token_seconds");
    QVERIFY(ttft);
    QCOMPARE(ttft->type, MetricType::Histogram);
    QCOMPARE(ttft->samples.size(), std::size_t(2 + 21));  // _sum, 21 buckets (incl. +Inf), _count
    QCOMPARE(ttft->samples.back().name, std::string("sglang:time_to_first_token_seconds_count"));
    QCOMPARE(ttft->samples.back().value, 11008.0);
    QCOMPARE(e.find("sglang:prompt_tokens_total")->samples[0].value, 8.128902e+06);
    QCOMPARE(e.find("sglang:func_latency_seconds")->samples.size(), std::size_t(21));
    QCOMPARE(e.samples, std::size_t(115 - 24));  // 12 HELP + 12 TYPE lines
  }

  void vllmFixtureTruncatedMidHistogram() {
    const std::string body = fixture("vllm_metrics_sample.txt");
    const Exposition e = ExpositionParser().parse(body);
    QVERIFY(e.truncated);
    QCOMPARE(e.problems.size(), std::size_t(1));
    const auto& p = e.problems[0];
    QCOMPARE(p.line, 56L);
    QCOMPARE(p.field, std::string("vllm:iteration_tokens_total"));
    QVERIFY2(p.what.find("le=96") != std::string::npos && p.what.find("truncated") != std::string::npos,
             p.what.c_str());
    // Everything before the cut is still there.
    QCOMPARE(e.find("vllm:num_requests_running")->samples[0].value, 0.0);
    QCOMPARE(e.find("vllm:gpu_prefix_cache_hit_rate")->samples[0].value, -1.0);
    QCOMPARE(e.find("vllm:cache_config_info")->type, MetricType::Gauge);  // TYPE without HELP
    QVERIFY(e.find("vllm:cache_config_info")->help.empty());
    QCOMPARE(*e.find("vllm:lora_requests_info")->samples[0].label("running_lora_adapters"), std::string());
  }

  void escapesTimestampsAndSpecialValues() {
    const Exposition e = ExpositionParser().parse(
        "# HELP m A \\\\ backslash\\nand newline\n"
        "# TYPE m gauge\n"
        "m{path=\"C:\\\\x\",msg=\"say \\\"hi\\\"\\n\",} 1.5e3 1700000000123\n"
        "m{path=\"b\"}\t+Inf\n"
        "m{path=\"c\"} -Inf -5\n"
        "m{path=\"d\"} NaN\n"
        "m { path = \"e\" } 7\n"
        "# a free comment\n"
        "untyped_thing 3\n");
    QVERIFY2(e.ok(), qPrintable(problems(e)));
    const MetricFamily* m = e.find("m");
    QCOMPARE(m->help, std::string("A \\ backslash\nand newline"));
    QCOMPARE(m->samples.size(), std::size_t(5));
    QCOMPARE(*m->samples[0].label("path"), std::string("C:\\x"));
    QCOMPARE(*m->samples[0].label("msg"), std::string("say \"hi\"\n"));
    QCOMPARE(m->samples[0].value, 1500.0);
    QCOMPARE(*m->samples[0].timestamp_ms, std::int64_t(1700000000123));
    QVERIFY(std::isinf(m->samples[1].value) && m->samples[1].value > 0);
    QVERIFY(std::isinf(m->samples[2].value) && m->samples[2].value < 0);
    QCOMPARE(*m->samples[2].timestamp_ms, std::int64_t(-5));
    QVERIFY(std::isnan(m->samples[3].value));
    QCOMPARE(*m->samples[4].label("path"), std::string("e"));
    QCOMPARE(e.find("untyped_thing")->type, MetricType::Untyped);
  }

  void countersOwnTheirTotalSeries() {
    const Exposition e = ExpositionParser().parse(
        "# TYPE sglang:num_transfer_failed_reqs counter\n"
        "sglang:num_transfer_failed_reqs_total{engine_type=\"decode\"} 4.0\n"
        "sglang:num_transfer_failed_reqs_created{engine_type=\"decode\"} 1.7e9\n");
    QVERIFY2(e.ok(), qPrintable(problems(e)));
    QCOMPARE(e.families.size(), std::size_t(1));
    QCOMPARE(e.families[0].samples.size(), std::size_t(2));
  }

  void malformedLines_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<long>("line");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("expected");
    QTest::newRow("wrong number") << QByteArray("a 1\nb{x=\"1\"} 12abc\n") << 2L << "b"
                                  << "expected a number";
    QTest::newRow("comma number") << QByteArray("a 1,5\n") << 1L << "a"
                                  << "expected a number";
    QTest::newRow("overflow") << QByteArray("a 1e999\n") << 1L << "a"
                              << "expected a number";
    QTest::newRow("no value") << QByteArray("a{x=\"1\"}\n") << 1L << "a"
                              << "expected a value";
    QTest::newRow("bad name") << QByteArray("9lives 1\n") << 1L << ""
                              << "expected a metric name";
    QTest::newRow("unclosed labels") << QByteArray("a{x=\"1\" 3\n") << 1L << "a"
                                     << "expected ',' or '}'";
    QTest::newRow("unterminated value") << QByteArray("a{x=\"1} 3\n") << 1L << "a{x}"
                                        << "closing '\"'";
    QTest::newRow("bad escape") << QByteArray("a{x=\"\\t\"} 3\n") << 1L << "a{x}"
                                << "expected an escape";
    QTest::newRow("unquoted") << QByteArray("a{x=1} 3\n") << 1L << "a{x}"
                              << "quoted label value";
    QTest::newRow("duplicate label") << QByteArray("a{x=\"1\",x=\"2\"} 3\n") << 1L << "a{x}"
                                     << "each label once";
    QTest::newRow("bad timestamp") << QByteArray("a 3 12.5\n") << 1L << "a"
                                   << "expected a timestamp";
    QTest::newRow("trailing junk") << QByteArray("a 3 12 x\n") << 1L << "a"
                                   << "end of the line";
    QTest::newRow("bad type") << QByteArray("# TYPE a gauges\na 1\n") << 1L << "a"
                              << "expected a type";
    QTest::newRow("type after sample") << QByteArray("a 1\n# TYPE a gauge\n") << 2L << "a"
                                       << "TYPE before";
    QTest::newRow("duplicate series") << QByteArray("a{x=\"1\"} 1\na{x=\"1\"} 2\n") << 2L << "a"
                                      << "duplicate";
    QTest::newRow("binary") << QByteArray("a 1\nb\x01\xff\x00 2\n", 11) << 2L << ""
                            << "binary data";
    QTest::newRow("not cumulative") << QByteArray(
                                           "# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"2\"} "
                                           "3\nh_bucket{le=\"+Inf\"} 5\nh_count 5\nh_sum 1\n")
                                    << 3L << "h"
                                    << "expected cumulative buckets";
    QTest::newRow("count mismatch")
        << QByteArray("# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"+Inf\"} 6\nh_count 7\nh_sum 1\nz 1\n")
        << 4L << "h_count"
        << "+Inf bucket's count 6";
    QTest::newRow("no +Inf mid-body") << QByteArray("# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_count 5\nz 1\n") << 3L
                                      << "h"
                                      << "le=\"+Inf\"";
    QTest::newRow("bad le") << QByteArray(
                                   "# TYPE h histogram\nh_bucket{le=\"x\"} 5\nh_bucket{le=\"+Inf\"} 5\nh_count 5\n")
                            << 2L << "h{le}"
                            << "bucket bound";
  }
  void malformedLines() {
    QFETCH(QByteArray, body);
    QFETCH(long, line);
    QFETCH(QString, field);
    QFETCH(QString, expected);
    const Exposition e = ExpositionParser().parse(std::string_view(body.constData(), body.size()));
    QVERIFY2(!e.problems.empty(), "no problem reported");
    const auto& p = e.problems[0];
    QCOMPARE(p.line, line);
    QCOMPARE(QString::fromStdString(p.field), field);
    QVERIFY2(QString::fromStdString(p.what).contains(expected), p.what.c_str());
    QVERIFY(!e.truncated);
  }

  void goodLinesSurviveABadOne() {
    const Exposition e = ExpositionParser().parse("a 1\nb 2x\nc 3\n");
    QCOMPARE(e.problems.size(), std::size_t(1));
    QCOMPARE(e.samples, std::size_t(2));
    QCOMPARE(e.find("c")->samples[0].value, 3.0);
  }

  // Every cut of the SGLang fixture: a cut inside a line is reported as truncated, a cut inside a
  // histogram too; nothing throws.
  void everyCutOfTheFixture() {
    const std::string body = fixture("sglang_metrics_sample.txt");
    int truncated = 0;
    for (std::size_t n = 0; n < body.size(); n += 7) {
      const Exposition e = ExpositionParser().parse(std::string_view(body).substr(0, n));
      if (n > 0 && body[n - 1] != '\n') QVERIFY2(e.truncated, qPrintable(QString::number(n)));
      truncated += e.truncated;
    }
    QVERIFY(truncated > 0);
  }

  void limits() {
    ExpositionLimits limits;
    limits.max_body_bytes = 100;
    limits.max_line_bytes = 20;
    limits.max_samples = 2;
    limits.max_problems = 3;
    const ExpositionParser parser(limits);
    QVERIFY(parser.parse(std::string(101, 'a')).problems[0].what.find("at most 100 bytes") != std::string::npos);
    const Exposition long_line = parser.parse("a 1\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 2\n");
    QCOMPARE(long_line.problems[0].line, 2L);
    QVERIFY(long_line.problems[0].what.find("at most 20 bytes") != std::string::npos);
    const Exposition many = parser.parse("a 1\nb 2\nc 3\n");
    QCOMPARE(many.samples, std::size_t(2));
    QCOMPARE(many.problems.size(), std::size_t(1));
    const Exposition noisy = parser.parse("x\ny\nz\nw\nv\n");
    QCOMPARE(noisy.problems.size(), std::size_t(3));
    QCOMPARE(noisy.problems_dropped, std::size_t(2));
  }

  void randomGarbageNeverThrows() {
    std::mt19937 rng(5);
    const std::string base = fixture("sglang_metrics_sample.txt");
    for (int i = 0; i < 300; ++i) {
      std::string body = base;
      for (int k = 0; k < 20; ++k) body[rng() % body.size()] = static_cast<char>(rng() % 256);
      const Exposition e = ExpositionParser().parse(body);
      QVERIFY(e.samples <= 115u);
    }
  }
};

QTEST_GUILESS_MAIN(TestExpositionParser)
#include "test_exposition_parser.moc"
