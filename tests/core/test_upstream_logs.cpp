// The live log parsers against upstream's own formats: every line of
// tests/data/upstream_logs/*.log was written from an upstream format string (the comment above it
// names the file and commit) and every line must parse and map exactly as the matching line of the
// .expected file says. The share recognised is printed for the closing note. Set
// KVSCOPE_PRINT_ACTUAL=1 to print what each line maps to in the .expected format (for reviewing a
// new fixture line, never for blessing a failure).
#include <QtTest>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/live/LogEventMapper.h"
#include "core/live/MooncakeLogMapper.h"
#include "core/live/SchedulerLogReader.h"

#include "tests/support/BuildTree.h"

namespace {
const std::string kUpstreamLogs = kvscope::test::testDataPath("upstream_logs");
}

using namespace kvscope;

namespace {

struct Line {
  int number = 0;  // in the .log file
  std::string text;
  std::string role;      // "P0", "D0".."D2", "-" (a traceback line: no worker of its own)
  std::string expected;  // the rest of the .expected line
};

std::vector<std::string> dataLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string s;
  while (std::getline(in, s))
    if (!s.starts_with("#")) out.push_back(s);
  return out;
}

// Pairs each non-comment line of `log` with the same-numbered non-comment line of `expected`.
std::vector<Line> load(const std::string& log, const std::string& expected, QString& error) {
  std::ifstream in(log);
  std::vector<Line> lines;
  std::string s;
  for (int n = 1; std::getline(in, s); ++n)
    if (!s.starts_with("#")) lines.push_back({n, s, {}, {}});
  const auto exp = dataLines(expected);
  if (lines.empty() || exp.size() != lines.size()) {
    error = QString("%1 data lines in %2, %3 in %4")
                .arg(lines.size())
                .arg(log.c_str())
                .arg(exp.size())
                .arg(expected.c_str());
    return {};
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto space = exp[i].find(' ');
    lines[i].role = exp[i].substr(0, space);
    lines[i].expected = space == std::string::npos ? "" : exp[i].substr(space + 1);
  }
  return lines;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

LiveAddressBook labBook() {  // resources/clusters/lab-1p3d.yaml
  LiveAddressBook b;
  b.decode_by_address = {{"10.99.91.47:15295", 0}, {"10.99.91.48:15295", 1}, {"10.99.91.49:15295", 2}};
  b.prefill_by_address = {{"10.99.91.40:8998", 0}};
  b.decode_workers = {0, 1, 2};
  return b;
}

LiveWorkerRef worker(const std::string& role) {
  LiveWorkerRef r;
  r.name = role;
  if (role.starts_with("P")) {
    r.role = WorkerRole::Prefill;
    r.prefill = std::stoi(role.substr(1));
  } else {
    r.worker = std::stoi(role.substr(1));
    r.peer_prefill = 0;  // the lab's one P
  }
  return r;
}

std::string events(const LogMapping& m) {
  std::string out;
  const auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  static const char* kStates[] = {"alive", "suspect", "dead"};
  if (m.gauges) add("gauges");
  for (const auto& e : m.events) {
    if (const auto* l = std::get_if<LinkHealth>(&e))
      add("link(P" + std::to_string(l->prefill) + "-D" + std::to_string(l->worker) + " " + kStates[int(l->state)] +
          (l->aborted_requests ? " aborted=" + std::to_string(l->aborted_requests) : "") + ")");
    else if (const auto* t = std::get_if<TransferFinished>(&e))
      add(std::string("transfer(P") + std::to_string(t->prefill) + "-D" + std::to_string(t->worker) +
          (t->ok ? " ok)" : " failed)"));
    else if (const auto* d = std::get_if<RequestDone>(&e))
      add(d->status == RequestStatus::Failed ? "request(failed)" : "request(ok)");
    else if (const auto* c = std::get_if<WorkerCrashed>(&e))
      add("crash(D" + std::to_string(c->worker) + ")");
    else if (const auto* x = std::get_if<Retraction>(&e))
      add("retraction(D" + std::to_string(x->worker) + " x" + std::to_string(x->requests.size()) + ")");
    else
      add("other");
  }
  return out.empty() ? "none" : out;
}

std::string prefixOf(const LogPrefix& p) {
  if (!p.present) return "noprefix";
  std::string tags;
  const auto tag = [&](const char* name, int v) {
    if (v >= 0) tags += (tags.empty() ? "" : ".") + std::string(name) + std::to_string(v);
  };
  tag("DP", p.dp), tag("PP", p.pp), tag("CP", p.cp), tag("ATTN_CP", p.attn_cp), tag("MOE_DP", p.moe_dp);
  tag("TP", p.tp), tag("EP", p.ep), tag("gpu_id=", p.gpu);
  std::string out = "[" + tags + "]";
  if (!p.has_time) out += " notime";
  if (p.millis >= 0) out += " ms=" + std::to_string(p.millis);
  if (!p.process.empty()) out += " proc=" + p.process;  // vLLM's "(NAME pid=N) ", spaces kept
  if (!p.level.empty()) out += " " + p.level;
  if (p.continues) out += " cont";
  return out;
}

std::string batchOf(const BatchGauges& b) {
  std::string out;
  const auto i = [&](const char* k, std::int64_t v) {
    if (v >= 0) out += std::string(" ") + k + "=" + std::to_string(v);
  };
  const auto d = [&](const char* k, double v) {
    if (v >= 0) out += std::string(" ") + k + "=" + num(v);
  };
  i("run", b.running_req), i("queue", b.queue_req), i("tok", b.tokens), d("usage", b.token_usage);
  i("full", b.full_tokens), d("full_u", b.full_usage), i("swa", b.swa_tokens), d("swa_u", b.swa_usage);
  i("mamba", b.mamba_num), d("mamba_u", b.mamba_usage);
  i("new_seq", b.new_seq), i("new_tok", b.new_token), i("cached", b.cached_token), d("hit", b.cache_hit_rate);
  i("prealloc", b.prealloc_req), i("transfer", b.transfer_req), i("retracted", b.retracted_req);
  i("inflight", b.inflight_req), i("bootstrap", b.bootstrap_req), i("pending", b.pending_token);
  d("prealloc_u", b.preallocated_usage), i("mixed", b.mixed_running_req), i("iter", b.iteration);
  i("graph", b.cuda_graph), d("gen", b.gen_throughput), d("input", b.input_throughput), d("accept", b.accept_len);
  i("preempt", b.preemptions), d("ext_hit", b.external_hit_rate), i("cap", b.capacity_tokens);
  return out;
}

std::string describe(const LogRecord& r) {
  std::string out = std::string(toString(r.kind)) + " " + prefixOf(r.prefix);
  if (r.kind == LogLineKind::DecodeBatch || r.kind == LogLineKind::PrefillBatch || r.kind == LogLineKind::EngineStats ||
      r.kind == LogLineKind::KvCacheSize)
    out += batchOf(r.batch);
  if (r.engines_aggregated > 0) out += " engines=" + std::to_string(r.engines_aggregated);
  const auto s = [&](const char* k, const std::string& v) {
    if (!v.empty()) out += std::string(" ") + k + "=" + v;
  };
  if (r.side) out += std::string(" side=") + r.side;
  s("stage", r.stage);
  if (r.rank >= 0) out += " rank=" + std::to_string(r.rank);
  s("rid", r.rid), s("room", r.bootstrap_room), s("remote", r.remote), s("state", r.poll_state);
  if (r.seconds >= 0) out += " secs=" + num(r.seconds);
  if (r.affected >= 0) out += " affected=" + std::to_string(r.affected);
  if (r.ratio_before >= 0) out += " ratio=" + num(r.ratio_before) + "->" + num(r.ratio_after);
  if (r.aborted) out += " aborted";
  s("session", r.session_id), s("host", r.bootstrap_host);
  if (r.prompt_tokens >= 0) out += " prompt=" + std::to_string(r.prompt_tokens);
  if (r.completion_tokens >= 0) out += " completion=" + std::to_string(r.completion_tokens);
  if (r.cached_tokens >= 0) out += " cached=" + std::to_string(r.cached_tokens);
  if (r.e2e_s >= 0) out += " e2e=" + num(r.e2e_s);
  if (r.ttft_s >= 0) out += " ttft=" + num(r.ttft_s);
  s("finish", r.finish_type);
  s("problem", r.problem);
  return out;
}

std::string describe(const MooncakeLogRecord& r) {
  std::string out = toString(r.kind);
  if (r.kind == MooncakeLineKind::NotGlog) return out;
  out += std::string(" ") + r.severity + (r.has_year ? " year" : "") + " " + r.file + ":" + std::to_string(r.line);
  if (!r.peer.empty()) out += " peer=" + r.peer;
  if (!r.local_nic.empty()) out += " nic=" + r.local_nic;
  return out;
}

bool printActual() { return qEnvironmentVariableIsSet("KVSCOPE_PRINT_ACTUAL"); }

}  // namespace

class TestUpstreamLogs : public QObject {
  Q_OBJECT
 private slots:
  // SGLang's request lines (--log-requests): every line parsed and mapped as expected, each request
  // counted once (from the decode's line), and a session's requests numbered as its turns.
  void sglangRequestLog() {
    QString error;
    const auto lines = load(kUpstreamLogs + "/sglang_requests.log", kUpstreamLogs + "/sglang_requests.expected", error);
    QVERIFY2(!lines.empty(), qPrintable(error));
    const LiveAddressBook book = labBook();
    QStringList wrong;
    for (const auto& l : lines) {
      const LogRecord r = SchedulerLogParser::parse(l.text);
      LogEventMapper mapper(worker(l.role), &book);
      const std::string mapped = events(mapper.map(r));
      const std::string actual = describe(r) + " -> " + mapped;
      if (printActual()) std::printf("%s %s\n", l.role.c_str(), actual.c_str());
      if (actual != l.expected)
        wrong
            << QString("line %1\n  expected: %2\n  actual:   %3").arg(l.number).arg(l.expected.c_str(), actual.c_str());
    }
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("\n")));
    // The decode's line of a session's second request is its turn 2, with the sizes as reported.
    LogEventMapper d1(worker("D1"), &book);
    std::vector<RequestDone> done;
    for (int i = 0; i < 2; ++i)
      for (const auto& e : d1.map(SchedulerLogParser::parse(lines.at(1).text)).events)
        if (const auto* d = std::get_if<RequestDone>(&e)) done.push_back(*d);
    QCOMPARE(int(done.size()), 2);
    QCOMPARE(done[0].session, SessionId(1000195));
    QCOMPARE(done[0].turn, 1);
    QCOMPARE(done[1].turn, 2);
    QCOMPARE(done[0].input_tokens, std::int64_t(43459));
    QCOMPARE(done[0].output_tokens, std::int64_t(212));
    QCOMPARE(done[0].cached_tokens, std::int64_t(36864));
    QCOMPARE(done[0].e2e, secondsToTime(4.871305465698242));
    QCOMPARE(done[0].ttft, SimTime(-1));  // no decode_throughput without --enable-metrics
    QCOMPARE(done[0].worker, WorkerId(1));
  }

  void sglangSchedulerLog() {
    QString error;
    const auto lines =
        load(kUpstreamLogs + "/sglang_scheduler.log", kUpstreamLogs + "/sglang_scheduler.expected", error);
    QVERIFY2(!lines.empty(), qPrintable(error));
    const LiveAddressBook book = labBook();
    int total = 0, recognised = 0, correct = 0, folded = 0, crashes = 0;
    QStringList wrong;
    for (const auto& l : lines) {
      const LogRecord r = SchedulerLogParser::parse(l.text);
      std::string actual = describe(r);
      if (l.role != "-") {
        LogEventMapper mapper(worker(l.role), &book);       // fresh: a line's own mapping, not its history's
        MooncakeLogMapper mooncake(worker(l.role), &book);  // Mooncake's glog lines in the same stderr
        actual += " -> " + events(r.kind == LogLineKind::MooncakeGlog ? mooncake.feed(r.message) : mapper.map(r));
        ++total;
        if (r.kind != LogLineKind::Unknown && r.kind != LogLineKind::Continuation && r.kind != LogLineKind::Malformed)
          ++recognised;
        crashes += r.kind == LogLineKind::SchedulerException;
      } else {
        ++folded;
      }
      if (printActual()) std::printf("%s %s\n", l.role.c_str(), actual.c_str());
      if (actual != l.expected)
        wrong << QString("line %1: %2\n  expected: %3\n  actual:   %4")
                     .arg(l.number)
                     .arg(l.text.c_str(), l.expected.c_str(), actual.c_str());
      else if (l.role != "-")
        ++correct;
    }
    std::printf(
        "sglang scheduler log: %d/%d lines recognised, %d/%d lines mapped as expected (%d traceback lines folded)\n",
        recognised, total, correct, total, folded);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("\n")));
    QCOMPARE(recognised, total);

    // The whole file through the reader: each traceback folds into its crash, whose exception is
    // the traceback's last line.
    SchedulerLogReader reader;
    std::vector<LogRecord> records;
    for (const auto& l : lines)
      for (auto& r : reader.feed(l.text)) records.push_back(std::move(r));
    for (auto& r : reader.flush()) records.push_back(std::move(r));
    std::vector<std::string> exceptions;
    for (const auto& r : records)
      if (r.kind == LogLineKind::SchedulerException) exceptions.push_back(r.exception);
    QCOMPARE(int(exceptions.size()), crashes);
    QCOMPARE(reader.counts().folded, long(folded));
    QCOMPARE(exceptions.at(0),
             std::string("AssertionError: req_pool_indices is full! There is a bug in memory estimation."));
    QCOMPARE(exceptions.at(1), std::string("RuntimeError: CUDA error: an illegal memory access was encountered"));
    QCOMPARE(exceptions.at(2), std::string("torch.cuda.OutOfMemoryError: CUDA out of memory."));
    QCOMPARE(reader.counts().unknown, 0L);
  }

  // vLLM's lines (VllmLogParser) through the same reader and mapper: each line as the .expected
  // file says, then the whole file as one stream: the '\r'-continued records joined per process
  // (the fatal error's traceback, the client's EngineDeadError) with other processes' lines in
  // between, one crash for one death, and a Mooncake failure that every TP rank logs counted once.
  void vllmEngineLog() {
    QString error;
    const auto lines = load(kUpstreamLogs + "/vllm_engine.log", kUpstreamLogs + "/vllm_engine.expected", error);
    QVERIFY2(!lines.empty(), qPrintable(error));
    const LiveAddressBook book = labBook();
    int total = 0, recognised = 0, correct = 0, continued = 0;
    QStringList wrong;
    for (const auto& l : lines) {
      const LogRecord r = SchedulerLogParser::parse(l.text);
      std::string actual = describe(r);
      if (l.role != "-") {
        LogEventMapper mapper(worker(l.role), &book);
        actual += " -> " + events(mapper.map(r));
        ++total;
        if (r.kind != LogLineKind::Unknown && r.kind != LogLineKind::Continuation && r.kind != LogLineKind::Malformed)
          ++recognised;
      } else {
        ++continued;
      }
      if (printActual()) std::printf("%s %s\n", l.role.c_str(), actual.c_str());
      if (actual != l.expected)
        wrong << QString("line %1: %2\n  expected: %3\n  actual:   %4")
                     .arg(l.number)
                     .arg(l.text.c_str(), l.expected.c_str(), actual.c_str());
      else if (l.role != "-")
        ++correct;
    }
    std::printf(
        "vllm engine log: %d/%d lines recognised (the rest are start-up and access lines), %d/%d mapped as "
        "expected, %d continuation lines\n",
        recognised, total, correct, total, continued);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("\n")));

    // As one decode worker's stream (every line, as a vLLM server's log interleaves its processes).
    SchedulerLogReader reader;
    LogEventMapper mapper(worker("D0"), &book);
    int crashes = 0, failed_transfers = 0, failed_requests = 0;
    std::vector<std::string> exceptions;
    const auto take = [&](const LogRecord& r) {
      if (r.kind == LogLineKind::SchedulerException) exceptions.push_back(r.exception);
      for (const auto& e : mapper.map(r).events) {
        crashes += std::holds_alternative<WorkerCrashed>(e);
        if (const auto* t = std::get_if<TransferFinished>(&e)) failed_transfers += !t->ok;
        if (const auto* d = std::get_if<RequestDone>(&e)) failed_requests += d->status == RequestStatus::Failed;
      }
    };
    for (const auto& l : lines)
      for (const auto& r : reader.feed(l.text)) take(r);
    for (const auto& r : reader.flush()) take(r);
    QCOMPARE(exceptions, std::vector<std::string>{"RuntimeError: Executor failed."});
    QCOMPARE(crashes, 1);  // the worker process, EngineCore, the client: one death
    QCOMPARE(reader.counts().folded, long(continued));
    // Eleven failure lines: six requests the decode side failed to pull (three of them logged by
    // TP0 and TP1 alike) and two prefill-side errors: eight failed transfers, not eleven.
    QCOMPARE(failed_transfers, 8);
    std::printf("vllm engine log as one stream: %d failed transfers, %d failed requests\n", failed_transfers,
                failed_requests);
  }

  // Data-parallel engines of one vLLM server are one worker: their stats lines add up (requests)
  // and average (KV use); an aggregated line replaces them; each EngineCore's pool adds up.
  void vllmEnginesAreOneWorker() {
    LogEventMapper mapper(worker("D0"), nullptr);
    const auto line = [](const char* engine, int running, int waiting, double usage) {
      return std::string("(APIServer pid=7) INFO 08-20 09:14:02 [loggers.py:123] Engine ") + engine +
             ": Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: " +
             std::to_string(running) + " reqs, Waiting: " + std::to_string(waiting) +
             " reqs, GPU KV cache usage: " + num(usage) + "%, Prefix cache hit rate: 50.0%";
    };
    mapper.map(SchedulerLogParser::parse(line("000", 10, 1, 40)));
    const LogMapping both = mapper.map(SchedulerLogParser::parse(line("001", 6, 2, 20)));
    QVERIFY(both.gauges);
    QCOMPARE(both.gauges->running_req, std::int64_t{16});
    QCOMPARE(both.gauges->queue_req, std::int64_t{3});
    QCOMPARE(both.gauges->token_usage, 0.3);
    const LogMapping again = mapper.map(SchedulerLogParser::parse(line("000", 1, 0, 10)));
    QCOMPARE(again.gauges->running_req, std::int64_t{7});  // engine 000's newest line replaces its last
    for (const char* dp : {"EngineCore_DP0", "EngineCore_DP1"})
      mapper.map(SchedulerLogParser::parse(
          std::string("(") + dp +
          " pid=9) INFO 08-20 09:13:31 [kv_cache_utils.py:1087] GPU KV cache size: 436,880 tokens"));
    const LogMapping pool = mapper.map(SchedulerLogParser::parse(
        "(EngineCore_DP1 pid=9) INFO 08-20 09:13:32 [kv_cache_utils.py:1087] GPU KV cache size: 436,880 tokens"));
    QCOMPARE(pool.gauges->capacity_tokens, std::int64_t{2 * 436880});  // a repeated line is not counted twice
    const LogRecord bad = SchedulerLogParser::parse(
        "(APIServer pid=7) INFO 08-20 09:14:02 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
        "Running: many reqs, GPU KV cache usage: 1.0%");
    QCOMPARE(bad.kind, LogLineKind::Malformed);
    QVERIFY2(bad.problem.find("field 'Running'") != std::string::npos, bad.problem.c_str());
    // A count beyond any integer (fuzz.scheduler_log found one that overflowed the cast) is capped.
    std::string huge = line("000", 1, 0, 10);
    huge.replace(huge.find("Running: 1 reqs"), 15, "Running: " + std::string(95, '8') + " reqs");
    QCOMPARE(SchedulerLogParser::parse(huge).batch.running_req, std::int64_t{1'000'000'000'000'000});
    // A line cut short names the field it lacks (fuzz.scheduler_log found one that did not).
    const LogRecord cut = SchedulerLogParser::parse(line("000", 1, 0, 10).substr(0, 120));
    QCOMPARE(cut.kind, LogLineKind::Malformed);
    QVERIFY2(cut.problem.starts_with("field 'Running'"), cut.problem.c_str());
  }

  void mooncakeTransferEngineLog() {
    QString error;
    const auto lines = load(kUpstreamLogs + "/mooncake_transfer_engine.log",
                            kUpstreamLogs + "/mooncake_transfer_engine.expected", error);
    QVERIFY2(!lines.empty(), qPrintable(error));
    const LiveAddressBook book = labBook();
    int total = 0, recognised = 0, correct = 0;
    QStringList wrong;
    for (const auto& l : lines) {
      const MooncakeLogRecord r = MooncakeLogParser::parse(l.text);
      MooncakeLogMapper mapper(worker(l.role), &book);
      const std::string actual = describe(r) + " -> " + events(mapper.map(r));
      ++total;
      if (r.kind != MooncakeLineKind::Unknown && r.kind != MooncakeLineKind::NotGlog) ++recognised;
      if (printActual()) std::printf("%s %s\n", l.role.c_str(), actual.c_str());
      if (actual == l.expected)
        ++correct;
      else
        wrong << QString("line %1: %2\n  expected: %3\n  actual:   %4")
                     .arg(l.number)
                     .arg(l.text.c_str(), l.expected.c_str(), actual.c_str());
    }
    std::printf("mooncake transfer-engine log: %d/%d lines recognised, %d/%d lines mapped as expected\n", recognised,
                total, correct, total);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("\n")));
    QCOMPARE(recognised, total);
  }

  // The mapper's own counters and the shape of what it did not know.
  void mooncakeCountsAndShapes() {
    MooncakeLogMapper mapper(worker("P0"), nullptr);
    mapper.feed("I0820 09:00:00.000100 140200 tcp_transport.cpp:343] TcpTransport: listen on port 15400");
    mapper.feed("E0820 09:00:01.000000 140200 new_transport.cpp:12] Frobnicator 7 lost 12 widgets");
    mapper.feed("E0820 09:00:02.000000 140200 new_transport.cpp:12] Frobnicator 8 lost 3 widgets");
    mapper.feed("*** Check failure stack trace: ***");
    QCOMPARE(mapper.counts().lines, 4L);
    QCOMPARE(mapper.counts().known, 1L);
    QCOMPARE(mapper.counts().unknown, 2L);
    QCOMPARE(mapper.counts().not_glog, 1L);
    const auto top = mapper.unknownShapes().top(5);
    QCOMPARE(int(top.size()), 1);
    QCOMPARE(LineShapeCounter::describe(top[0]), std::string("2 lines like \"Frobnicator <n> lost <n> widgets\""));
  }

  void unknownSchedulerLinesByShape() {
    SchedulerLogReader reader;
    reader.feed("[2026-08-20 09:14:02 TP0] Xyz batch. #foo: 12");
    reader.feed("[2026-08-20 09:14:03 TP1] Xyz batch. #foo: 7");
    reader.feed(
        "[2026-08-20 09:14:03 TP1] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, mem usage=15.06 GB.");
    const auto top = reader.unknownShapes().top(1);
    QCOMPARE(reader.unknownShapes().total(), 3L);
    QCOMPARE(LineShapeCounter::describe(top.at(0)), std::string("2 lines like \"Xyz batch. #foo: <n>\""));
  }
};

QTEST_GUILESS_MAIN(TestUpstreamLogs)
#include "test_upstream_logs.moc"
