// Trace readers against the real public samples in tests/data/traces (counts and values checked with
// python3 over the same files), the whole public traces when KVSCOPE_TRACE_DIR names them, and
// malformed files: strict mode names file, line or field path and field; lenient mode skips.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string_view>

#include "core/model/Error.h"
#include "core/trace/TraceLoader.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;
using kvscope::test::fullTraceDir;
using kvscope::test::testDataPath;

namespace {

std::string tracePath(const QString& rel) { return testDataPath("traces/" + rel.toStdString()); }

std::string writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& content) {
  const std::string path = dir.filePath(name).toStdString();
  std::ofstream(path, std::ios::binary).write(content.constData(), content.size());
  return path;
}

QString errorOf(const std::string& path, const TraceOptions& options = {}) {
  try {
    loadTrace(path, options);
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

const Session* bySource(const Workload& w, const std::string& suffix) {
  for (const auto& s : w.sessions)
    if (std::string_view(s.source).ends_with(suffix)) return &s;
  return nullptr;
}

// A Mooncake record from raw JSON values; an empty value leaves its field out.
QByteArray moon(const QByteArray& in, const QByteArray& out = "5", const QByteArray& ids = "[]",
                const QByteArray& ts = "1") {
  QByteArrayList fields;
  const std::pair<const char*, QByteArray> all[] = {
      {"timestamp", ts}, {"input_length", in}, {"output_length", out}, {"hash_ids", ids}};
  for (const auto& [key, value] : all)
    if (!value.isEmpty()) fields << QByteArray("\"") + key + "\": " + value;
  return "{" + fields.join(", ") + "}";
}

// An agentic request the same way, plus raw `extra` fields.
QByteArray req(const QByteArray& in, const QByteArray& out, const QByteArray& ids, const QByteArray& extra = "",
               const QByteArray& t = "1") {
  QByteArray head = "{\"t\": " + t + ", \"type\": \"n\", ";
  if (!in.isEmpty()) head += "\"in\": " + in + ", ";
  return head + "\"out\": " + out + ", \"hash_ids\": " + ids + extra + "}";
}

const QByteArray kGoodJsonl = moon("600", "5", "[0, 1]", "0");
const QByteArray kGoodCsvRow = "2023-11-16 18:15:46.6805900,374,44";
const QByteArray kSubagent = R"({"t": 5, "type": "subagent", "agent_id": "agent_001", "subagent_type": "Explore", )"
                             R"("system_tokens": 10, "tool_tokens": 10, "requests": [)" +
                             req("100", "1", "[7]", "", "0") + "]}";

QByteArray jsonl(const QByteArray& line2, const QByteArray& line3 = kGoodJsonl) {
  return kGoodJsonl + "\n" + line2 + "\n" + line3 + "\n" + kGoodJsonl + "\n";
}

QByteArray csv(const QByteArray& row2, const QByteArray& row3 = "2023-11-16 18:15:47.0,10,2") {
  return "TIMESTAMP,ContextTokens,GeneratedTokens\r\n" + row2 + "\r\n" + row3 +
         "\r\n2023-11-16 18:16:46,20,0";  // no trailing newline, like the real files
}

// A session whose request [1] is `request`; line 3 is the block size, so syntax errors there have a line.
QByteArray agentic(const QByteArray& request, const QByteArray& line3 = R"(  "block_size": 64,)") {
  return QByteArrayList{"{",
                        R"(  "id": "x",)",
                        line3,
                        R"(  "system_tokens": 100, "tool_tokens": 28, "requests": [)",
                        "  " + req("200", "5", "[1, 2, 3]", R"(, "think_time": 0)", "0") + ",",
                        "  " + request + ",",
                        R"(  {"t": 9, "type": "s", "in": 300, "out": 5, "hash_ids": [1, 2, 3, 4]}]})",
                        ""}
      .join('\n');
}

}  // namespace

class TestTraceReaders : public QObject {
  Q_OBJECT
 private slots:
  void mooncake_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("requests");
    QTest::addColumn<int>("firstInput");
    QTest::addColumn<int>("firstOutput");
    QTest::addColumn<double>("lastStart");
    // The first 600 lines of each trace (tests/data/README.md); python3's json module on the same files.
    QTest::newRow("conversation") << "conversation_trace_600.jsonl" << 600 << 6758 << 500 << 200.999;
    QTest::newRow("synthetic") << "synthetic_trace_600.jsonl" << 600 << 40160 << 6 << 165.837;
  }

  void mooncake() {
    QFETCH(QString, file);
    QFETCH(int, requests);
    QFETCH(int, firstInput);
    QFETCH(int, firstOutput);
    QFETCH(double, lastStart);
    checkMooncake(tracePath(file), requests, firstInput, firstOutput, lastStart);
  }

  // The whole traces (upstream's files, by their git blob ids in tests/data/README.md): the same checks
  // over every line, with the values python3 gave on them.
  void mooncakeWhole_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("requests");
    QTest::addColumn<int>("firstInput");
    QTest::addColumn<int>("firstOutput");
    QTest::addColumn<double>("lastStart");
    QTest::newRow("conversation") << "conversation_trace.jsonl" << 12031 << 6758 << 500 << 3536.999;
    QTest::newRow("synthetic") << "synthetic_trace.jsonl" << 3993 << 40160 << 6 << 1022.025;
  }

  void mooncakeWhole() {
    QFETCH(QString, file);
    QFETCH(int, requests);
    QFETCH(int, firstInput);
    QFETCH(int, firstOutput);
    QFETCH(double, lastStart);
    const std::string path = wholeTrace(file);
    if (path.empty()) QSKIP("KVSCOPE_TRACE_DIR is not set (the folder holding Mooncake's whole traces)");
    QVERIFY2(std::filesystem::exists(path), wholeTraceMissing(path).constData());
    checkMooncake(path, requests, firstInput, firstOutput, lastStart);
  }

  void azure_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("firstContext");
    QTest::addColumn<int>("firstGenerated");
    QTest::addColumn<double>("span");
    // The header and the first 600 rows. Spans: 18:15:46.6805900 .. 18:18:14.8697200 and
    // 18:17:03.9799600 .. 18:21:25.6159590.
    QTest::newRow("conv") << "AzureLLMInferenceTrace_conv_600.csv" << 600 << 374 << 44 << 148.18913;
    QTest::newRow("code") << "AzureLLMInferenceTrace_code_600.csv" << 600 << 4808 << 10 << 261.635999;
  }

  void azure() {
    QFETCH(QString, file);
    QFETCH(int, rows);
    QFETCH(int, firstContext);
    QFETCH(int, firstGenerated);
    QFETCH(double, span);
    checkAzure(file, tracePath(file), rows, firstContext, firstGenerated, span);
  }

  void azureWhole_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("firstContext");
    QTest::addColumn<int>("firstGenerated");
    QTest::addColumn<double>("span");
    // Spans: 18:15:46.6805900 .. 19:14:08.4025270 and 18:17:03.9799600 .. 19:14:19.9280160.
    QTest::newRow("conv") << "AzureLLMInferenceTrace_conv.csv" << 19366 << 374 << 44 << 3501.721937;
    QTest::newRow("code") << "AzureLLMInferenceTrace_code.csv" << 8819 << 4808 << 10 << 3435.948056;
  }

  void azureWhole() {
    QFETCH(QString, file);
    QFETCH(int, rows);
    QFETCH(int, firstContext);
    QFETCH(int, firstGenerated);
    QFETCH(double, span);
    const std::string path = wholeTrace(file);
    if (path.empty()) QSKIP("KVSCOPE_TRACE_DIR is not set (the folder holding Azure's whole 2023 traces)");
    QVERIFY2(std::filesystem::exists(path), wholeTraceMissing(path).constData());
    checkAzure(file, path, rows, firstContext, firstGenerated, span);
  }

  // Whatever number of sessions the folder holds (upstream's 739, or a subset): every file is one
  // top-level session, and none of their records is malformed.
  void kvCacheTesterWhole() {
    const std::string path = wholeTrace("kv-cache-tester");
    if (path.empty()) QSKIP("KVSCOPE_TRACE_DIR is not set (the folder holding kv-cache-tester/)");
    QVERIFY2(std::filesystem::is_directory(path), wholeTraceMissing(path).constData());
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(path)) files += e.path().extension() == ".json";
    const Workload w = loadTrace(path, {});
    QCOMPARE(w.skipped_records, std::size_t(0));
    std::size_t top = 0;
    for (const auto& s : w.sessions) top += s.source.find('#') == std::string::npos;
    QCOMPARE(top, files);
  }

 private:
  // A file of the whole traces in KVSCOPE_TRACE_DIR, or "" when that is unset. A set variable that
  // lacks the file is a failure (wholeTraceMissing), not a skip: the user asked for these traces.
  static std::string wholeTrace(const QString& name) {
    const std::string dir = fullTraceDir();
    return dir.empty() ? std::string() : dir + "/" + name.toStdString();
  }
  static QByteArray wholeTraceMissing(const std::string& path) {
    return "KVSCOPE_TRACE_DIR=" + QByteArray::fromStdString(fullTraceDir()) + " holds no " +
           QByteArray::fromStdString(std::filesystem::path(path).filename().string());
  }

  static void checkMooncake(const std::string& path, int requests, int firstInput, int firstOutput, double lastStart) {
    const bool conversation = std::filesystem::path(path).filename().string().starts_with("conv");
    const Workload w = loadTrace(path, {});
    QCOMPARE(w.sessions.size(), std::size_t(requests));
    QCOMPARE(w.skipped_records, std::size_t(0));
    const Turn& first = w.sessions.front().turns.front();
    QCOMPARE(first.prompt.input_tokens, firstInput);
    QCOMPARE(first.output_tokens, firstOutput);
    QCOMPARE(w.sessions.back().start_s, lastStart);
    for (std::size_t i = 0; i < w.sessions.size(); ++i) {
      const Session& s = w.sessions[i];
      QCOMPARE(s.id, SessionId(i + 1));  // the files are sorted by time, so order = line order
      QCOMPARE(s.turns.size(), std::size_t(1));
      const PromptLayout& p = s.turns[0].prompt;
      QCOMPARE(p.source_block_size, 512);
      QCOMPARE(p.source_hashes.size(), std::size_t((p.input_tokens + 511) / 512));  // README: 100% of rows
      QCOMPARE(p.session_scope, first.prompt.session_scope);                        // ids are global across the trace
      if (conversation) QCOMPARE(p.source_hashes.front(), std::uint64_t(0));        // README
    }
    const std::uint64_t second_id = conversation ? 14 : 80;
    QCOMPARE(w.sessions[1].turns[0].prompt.source_hashes[1], second_id);
  }

  static void checkAzure(const QString& file, const std::string& path, int rows, int firstContext, int firstGenerated,
                         double span) {
    const Workload w = loadTrace(path, {});
    QCOMPARE(w.sessions.size(), std::size_t(rows));
    QCOMPARE(w.skipped_records, std::size_t(0));
    QCOMPARE(w.sessions.front().start_s, 0.0);
    QCOMPARE(w.sessions.front().turns[0].prompt.input_tokens, firstContext);
    QCOMPARE(w.sessions.front().turns[0].output_tokens, firstGenerated);
    QVERIFY2(std::abs(w.sessions.back().start_s - span) < 1e-6, qPrintable(QString::number(span, 'f', 7)));
    std::set<std::uint64_t> scopes;
    for (const auto& s : w.sessions) {
      QCOMPARE(s.turns.size(), std::size_t(1));
      QCOMPARE(s.turns[0].prompt.source_block_size, 0);
      scopes.insert(s.turns[0].prompt.session_scope);
    }
    QCOMPARE(scopes.size(), std::size_t(rows));                                             // every prompt is unique
    if (file.contains("conv")) QVERIFY(std::abs(w.sessions[1].start_s - 4.314579) < 1e-6);  // :50.9951690
  }

 private slots:
  void kvCacheTesterDirectory() {
    TraceOptions options;
    options.first_session_id = 1000;
    const Workload w = loadTrace(tracePath("kv-cache-tester"), options);
    QCOMPARE(w.skipped_records, std::size_t(0));
    // python3 over the 13 files: 13 sessions and 6 sub-agents (0277 has 4, 0291 has 2); 226 turns,
    // every non-subagent request, nested ones too.
    QCOMPARE(w.sessions.size(), std::size_t(19));
    QCOMPARE(w.turnCount(), std::size_t(226));
    std::set<SessionId> ids;
    int top = 0;
    for (const auto& s : w.sessions) {
      ids.insert(s.id);
      QVERIFY(s.id >= 1000 && s.id < 1019);
      if (s.source.find('#') == std::string::npos) ++top;
    }
    QCOMPARE(top, 13);
    QCOMPARE(ids.size(), w.sessions.size());
    // Files are read in name order, so the first file's session takes the first id.
    QCOMPARE(bySource(w, "/trace_0001.json")->id, SessionId(1000));
    QVERIFY(std::is_sorted(w.sessions.begin(), w.sessions.end(), [](const Session& a, const Session& b) {
      return a.start_s < b.start_s || (a.start_s == b.start_s && a.id < b.id);
    }));
  }

  void knownAgenticFile_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("topTurns");
    QTest::addColumn<int>("firstIn");
    QTest::addColumn<int>("firstOut");
    QTest::addColumn<int>("boilerplate");
    QTest::addColumn<double>("lastT");
    QTest::addColumn<QList<int>>("subTurns");
    QTest::addColumn<QList<double>>("subStarts");
    QTest::addColumn<QList<int>>("subBoilerplate");
    // Values from python3's json module on the same files.
    QTest::newRow("0277") << "trace_0277.json" << 9 << 19560 << 1017 << 15041 << 818.0 << QList<int>{4, 12, 17, 11}
                          << QList<double>{79.224, 183.906, 211.347, 723.533} << QList<int>{8423, 8423, 8423, 8530};
    QTest::newRow("0291") << "trace_0291.json" << 20 << 17869 << 426 << 15484 << 1363.0 << QList<int>{5, 7}
                          << QList<double>{1148.013, 1180.553} << QList<int>{8866, 8866};
    QTest::newRow("0001") << "trace_0001.json" << 41 << 71175 << 169 << 17217 << 5418.0 << QList<int>{}
                          << QList<double>{} << QList<int>{};
  }

  void knownAgenticFile() {
    QFETCH(QString, file);
    QFETCH(int, topTurns);
    QFETCH(int, firstIn);
    QFETCH(int, firstOut);
    QFETCH(int, boilerplate);
    QFETCH(double, lastT);
    QFETCH(QList<int>, subTurns);
    QFETCH(QList<double>, subStarts);
    QFETCH(QList<int>, subBoilerplate);
    const std::string path = tracePath("kv-cache-tester/" + file);
    const Workload w = loadTrace(path, {});
    QCOMPARE(w.sessions.size(), std::size_t(1 + subTurns.size()));
    const Session& top = w.sessions.front();  // starts at 0, sub-agents later
    QCOMPARE(top.source, path);
    QCOMPARE(top.start_s, 0.0);
    QCOMPARE(top.turns.size(), std::size_t(topTurns));
    QCOMPARE(top.turns.front().prompt.input_tokens, firstIn);
    QCOMPARE(top.turns.front().output_tokens, firstOut);
    QCOMPARE(top.turns.front().prompt.shared_prefix_tokens, boilerplate);
    QCOMPARE(top.turns.front().prompt.source_block_size, 64);
    QCOMPARE(top.turns.back().offset_s, lastT);
    for (int i = 0; i < subTurns.size(); ++i) {
      const std::string agent = QString("#agent_%1").arg(i + 1, 3, 10, QChar('0')).toStdString();
      const Session* s = bySource(w, agent);
      QVERIFY2(s, agent.c_str());
      QCOMPARE(s->source, path + agent);
      QCOMPARE(s->turns.size(), std::size_t(subTurns[i]));
      QCOMPARE(s->start_s, subStarts[i]);
      QCOMPARE(s->turns.front().offset_s, 0.0);
      QCOMPARE(s->turns.front().prompt.shared_prefix_tokens, subBoilerplate[i]);
      QCOMPARE(s->turns.front().prompt.session_scope, top.turns.front().prompt.session_scope);  // per trace
      QVERIFY(s->turns.front().prompt.shared_scope != top.turns.front().prompt.shared_scope);
      QVERIFY(s->id > top.id);
    }
  }

  void malformed_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<int>("line");  // 0: agentic files name a field path instead
    QTest::addColumn<QStringList>("expected");
    QTest::addColumn<int>("lenientSessions");  // -1: still an error in lenient mode
    QTest::addColumn<int>("lenientSkipped");
    auto row = [](const char* name, const QByteArray& content, int line, const QStringList& expected, int sessions,
                  int skipped) { QTest::newRow(name) << name << content << line << expected << sessions << skipped; };
    row("syntax.jsonl", jsonl(kGoodJsonl, R"({"timestamp": 0, "input_length": 6,, "output_length": 5})"), 3,
        {"invalid JSON", "at column"}, 3, 1);
    row("missing.jsonl", jsonl(moon("6", "", "[]")), 2, {"field 'output_length'", "missing"}, 3, 1);
    row("type.jsonl", jsonl(moon("\"abc\"")), 2, {"field 'input_length'", "expected an integer > 0, got \"abc\""}, 3,
        1);
    row("neg.jsonl", jsonl(moon("6", "-5")), 2, {"field 'output_length'", "an integer >= 0, got -5"}, 3, 1);
    row("frac.jsonl", jsonl(moon("6.5")), 2, {"field 'input_length'", "got 6.5"}, 3, 1);
    row("huge.jsonl", jsonl(moon("99999999999999999999")), 2, {"field 'input_length'", "got 1e+20"}, 3, 1);
    row("int32.jsonl", jsonl(moon("3000000000")), 2, {"field 'input_length'", "at most 2147483647"}, 3, 1);
    row("overflow.jsonl", jsonl(R"({"timestamp": 1e400, "input_length": 6})"), 2, {"invalid JSON"}, 3, 1);
    row("ts.jsonl", jsonl(moon("6", "5", "[]", "\"0\"")), 2, {"field 'timestamp'", "got \"0\""}, 3, 1);
    row("future.jsonl", jsonl(moon("6", "5", "[]", "1e300")), 2, {"field 'timestamp'", "got 1e+300"}, 3, 1);
    row("ids.jsonl", jsonl(moon("600", "5", "[0, 1, 2]")), 2, {"field 'hash_ids'", "most 2", "got 3"}, 3, 1);
    row("id.jsonl", jsonl(moon("600", "5", "[0, -1]")), 2, {"field 'hash_ids[1]'", "got -1"}, 3, 1);
    row("idtype.jsonl", jsonl(moon("600", "5", "{}")), 2, {"field 'hash_ids'", "got an object"}, 3, 1);
    row("array.jsonl", jsonl("[1, 2]"), 2, {"expected a JSON object"}, 3, 1);
    row("columns.csv", csv(kGoodCsvRow, "2023-11-16 18:15:47.0,5"), 3, {"expected 3 columns", "got 2"}, 2, 1);
    row("time.csv", csv("2023-11-16 25:15:46.1,10,2"), 2, {"field 'TIMESTAMP'", "got \"2023-11-16 25:15:46.1\""}, 2, 1);
    row("digits.csv", csv("2023-11-16 18:15:46.123456789,10,2"), 2, {"field 'TIMESTAMP'"}, 2, 1);
    row("date.csv", csv("2023-02-29 18:15:46,10,2"), 2, {"field 'TIMESTAMP'"}, 2, 1);
    row("int.csv", csv("2023-11-16 18:15:46,abc,2"), 2,
        {"field 'ContextTokens'", "expected an integer > 0, got \"abc\""}, 2, 1);
    row("negative.csv", csv("2023-11-16 18:15:46,10,-2"), 2, {"field 'GeneratedTokens'"}, 2, 1);
    row("header.csv", "TIMESTAMP,Context,Generated\n" + kGoodCsvRow, 1,
        {"field 'header'", "got \"TIMESTAMP,Context,Generated\""}, -1, 0);
    row("empty.csv", "", 1, {"field 'header'"}, -1, 0);
    row("syntax.json", agentic(kSubagent, R"(  "block_size": 64,,)"), 3, {"invalid JSON"}, -1, 0);
    row("missing.json", agentic(req("", "5", "[]")), 0, {"field 'requests[1].in'", "missing"}, 1, 1);
    row("type.json", agentic(req("64", "\"x\"", "[]")), 0, {"field 'requests[1].out'", "got \"x\""}, 1, 1);
    row("ids.json", agentic(req("64", "5", "[1, 2]")), 0, {"field 'requests[1].hash_ids'", "most 1"}, 1, 1);
    row("think.json", agentic(req("64", "5", "[]", R"(, "think_time": -1)")), 0,
        {"field 'requests[1].think_time'", "got -1"}, 1, 1);
    row("t.json", agentic(req("64", "5", "[]", "", "1e200")), 0, {"field 'requests[1].t'", "1e+200"}, 1, 1);
    row("kind.json", agentic(QByteArray(req("64", "5", "[]")).replace("\"n\"", "\"x\"")), 0,
        {"field 'requests[1].type'", "got \"x\""}, 1, 1);
    row("five.json", agentic("5"), 0, {"field 'requests[1]'", "got 5"}, 1, 1);
    row("nested.json", agentic(QByteArray(kSubagent).replace(R"("in": 100)", R"("in": -4)")), 0,
        {"field 'requests[1].requests[0].in'", "got -4"}, 1, 1);
    row("sub.json", agentic(QByteArray(kSubagent).replace("\"subagent_type\"", "\"kind\"")), 0,
        {"field 'requests[1].subagent_type'", "missing"}, 1, 1);
    row("bs.json", agentic(kSubagent, R"(  "block_size": 0,)"), 0, {"field 'block_size'", "got 0"}, -1, 0);
    row("array.json", "[]", 0, {"expected a JSON object"}, -1, 0);
    row("empty.json", "", 1, {"invalid JSON"}, -1, 0);
    row("trace.txt", kGoodJsonl, 0, {"expected a .jsonl (Mooncake), .csv (Azure)", "got '.txt'"}, -1, 0);
  }

  void malformed() {
    QFETCH(QString, name);
    QFETCH(QByteArray, content);
    QFETCH(int, line);
    QFETCH(QStringList, expected);
    QFETCH(int, lenientSessions);
    QFETCH(int, lenientSkipped);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = writeFile(dir, name, content);
    const QString message = errorOf(path);
    QVERIFY2(!message.isEmpty(), "strict mode accepted a malformed file");
    expected.prepend(dir.filePath(name) + (line > 0 ? QString(":%1: ").arg(line) : QString(": ")));
    for (const auto& part : expected) QVERIFY2(message.contains(part), qPrintable(message + " / " + part));

    TraceOptions lenient;
    lenient.lenient = true;
    if (lenientSessions < 0) {
      QCOMPARE(errorOf(path, lenient), message);
      return;
    }
    const Workload w = loadTrace(path, lenient);
    QCOMPARE(w.sessions.size(), std::size_t(lenientSessions));
    QCOMPARE(w.skipped_records, std::size_t(lenientSkipped));
  }

  void goodSamplesLoad() {
    QTemporaryDir dir;
    // The samples the malformed cases start from are themselves valid, so each error is the edit's.
    const Workload m = loadTrace(writeFile(dir, "ok.jsonl", jsonl(kGoodJsonl)), {});
    QCOMPARE(m.sessions.size(), std::size_t(4));
    const Workload c = loadTrace(writeFile(dir, "ok.csv", csv(kGoodCsvRow)), {});
    QCOMPARE(c.sessions.size(), std::size_t(3));
    QVERIFY(std::abs(c.sessions.back().start_s - 59.31941) < 1e-9);
    const Workload a = loadTrace(writeFile(dir, "ok.json", agentic(kSubagent)), {});
    QCOMPARE(a.sessions.size(), std::size_t(2));
    QCOMPARE(a.sessions[0].turns.size(), std::size_t(2));
    QCOMPARE(a.sessions[0].turns[1].think_s, 0.0);  // missing think_time
    QCOMPARE(a.sessions[1].start_s, 5.0);
    QCOMPARE(a.sessions[0].turns[0].prompt.shared_prefix_tokens, 128);
    // LF line ends, a trailing newline and blank lines are fine too.
    const QByteArray lf_csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n\n" + kGoodCsvRow + "\n\n";
    const Workload lf = loadTrace(writeFile(dir, "lf.csv", lf_csv), {});
    QCOMPARE(lf.sessions.size(), std::size_t(1));
  }

  void missingPath() {
    const QString message = errorOf("/nonexistent/dir/trace.jsonl");
    QVERIFY2(message.startsWith("/nonexistent/dir/trace.jsonl: no such file"), qPrintable(message));
    QTemporaryDir dir;
    const QString empty = errorOf(dir.path().toStdString());
    QVERIFY2(empty.contains("found none"), qPrintable(empty));
  }

  // A trace with no requests is an error, not a run of 0 requests.
  void emptyTraceIsAnError() {
    QTemporaryDir dir;
    const QString empty = errorOf(writeFile(dir, "empty.jsonl", ""));
    QVERIFY2(empty.contains("the trace holds no requests (an empty file?)"), qPrintable(empty));
    TraceOptions lenient;
    lenient.lenient = true;
    const QString bad = errorOf(writeFile(dir, "bad.jsonl", "{\"x\": 1}\n"), lenient);
    QVERIFY2(bad.contains("all 1 records were malformed"), qPrintable(bad));
  }

  void deepSubagentNesting() {
    QByteArray inner = R"({"t": 0, "type": "n", "in": 100, "out": 1, "hash_ids": [7]})";
    for (int i = 0; i < 40; ++i)
      inner = R"({"t": 1, "type": "subagent", "subagent_type": "E", "system_tokens": 1, "tool_tokens": 1, )"
              R"("requests": [)" +
              inner + "]}";
    QTemporaryDir dir;
    const std::string path = writeFile(dir, "deep.json", agentic(inner));
    const QString message = errorOf(path);
    QVERIFY2(message.contains("nested at most 16 deep"), qPrintable(message));
    TraceOptions lenient;
    lenient.lenient = true;
    const Workload w = loadTrace(path, lenient);
    QCOMPARE(w.skipped_records, std::size_t(1));
    QCOMPARE(w.sessions.size(), std::size_t(1));  // the levels above the cut hold no turns of their own
  }

  // Random edits of valid samples: only InputError may come out, and nothing may crash.
  void neverCrashesOnMutatedInput() {
    const QList<QPair<QString, QByteArray>> samples{
        {"m.jsonl", jsonl(kGoodJsonl)}, {"a.csv", csv(kGoodCsvRow)}, {"s.json", agentic(kSubagent)}};
    static const char kAlphabet[] = "{}[]\",:-+.0123456789eE \n\r\tnultrsfa#\x00\xff\xc3";
    const QByteArray alphabet(kAlphabet, sizeof(kAlphabet) - 1);
    std::mt19937 rng(7);
    QTemporaryDir dir;
    for (const auto& [name, sample] : samples) {
      for (int i = 0; i < 400; ++i) {
        QByteArray data = sample;
        for (int edits = 1 + rng() % 4; edits > 0 && !data.isEmpty(); --edits) {
          const int at = rng() % data.size();
          switch (rng() % 4) {
            case 0:
              data[at] = alphabet[rng() % alphabet.size()];
              break;
            case 1:
              data.insert(at, alphabet[rng() % alphabet.size()]);
              break;
            case 2:
              data.remove(at, 1 + rng() % 8);
              break;
            default:
              data.truncate(at);
          }
        }
        const std::string path = writeFile(dir, name, data);
        for (bool lenient : {false, true}) {
          TraceOptions options;
          options.lenient = lenient;
          try {
            const Workload w = loadTrace(path, options);
            for (const auto& s : w.sessions)
              for (const auto& t : s.turns) QVERIFY(t.prompt.input_tokens > 0 && t.output_tokens >= 0);
          } catch (const InputError&) {
          } catch (const std::exception& e) {
            QFAIL(qPrintable(QString("%1: %2 on\n%3").arg(name, e.what(), QString::fromLatin1(data))));
          }
        }
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestTraceReaders)
#include "test_trace_readers.moc"
