// Scheduler / Mooncake / client log lines: every format parsed with its fields,
// with and without TPn / DPn in the prefix; malformed variants name the field; a traceback folds into
// one crash; and each record maps onto the events the console, recorder and diagnosis consume.
#include <QtTest>

#include <random>

#include "core/live/LogEventMapper.h"
#include "core/live/SchedulerLogParser.h"
#include "core/live/SchedulerLogReader.h"

using namespace kvscope;

namespace {

const char* kCorrection =
    "[2025-06-01 12:00:01 TP0] Correcting streaming-session extend_input_len from 6648 to 0 (rid=4a1f, "
    "session_id=1000195, fill_len=6648, prefix_len=43459, kv_committed_len=43459)";
const char* kPrefillFailed =
    "[2025-06-01 12:00:03 TP4] Prefill transfer failed for request rank=4 req.rid='7f3a9c' req.bootstrap_room=6148 "
    "with exception KVTransferError(bootstrap_room=6148): Decode instance could be dead, remote mooncake session "
    "10.99.91.49:15295 is not alive";
const char* kDecodeFailed =
    "[2025-06-01 12:00:04 DP1 TP2] Decode transfer failed for request rank=2 decode_req.req.rid='8b1c' "
    "decode_req.req.bootstrap_room=77 with exception KVTransferError(bootstrap_room=77): Failed to get kvcache from "
    "prefill instance, it might be dead";
const char* kDecodeBatch =
    "[2025-06-01 12:00:05 TP0] Decode batch, #running-req: 12, #token: 80000, token usage: 0.61, pre-allocated usage: "
    "0.05, #prealloc-req: 3, #transfer-req: 2, #retracted-req: 0, cuda graph: True, gen throughput (token/s): 812.44, "
    "#queue-req: 4";
const char* kPrefillBatch =
    "[2025-06-01 12:00:05 TP0] Prefill batch. #new-seq: 1, #new-token: 6648, #cached-token: 43459, token usage: "
    "0.33, #running-req: 2, #queue-req: 0";

LogRecord parse(const char* line) { return SchedulerLogParser::parse(line); }

LiveAddressBook book() {
  LiveAddressBook b;
  b.decode_by_address = {{"10.99.91.47:15295", 0}, {"10.99.91.48:15295", 1}, {"10.99.91.49:15295", 2}};
  b.prefill_by_address = {{"10.99.91.40:8998", 0}};
  b.decode_workers = {0, 1, 2};
  return b;
}

LiveWorkerRef worker(const char* name, WorkerRole role, int index) {
  LiveWorkerRef r;
  r.name = name;
  r.role = role;
  if (role == WorkerRole::Prefill)
    r.prefill = index;
  else
    r.worker = index;
  return r;
}

template <class T>
std::vector<T> eventsOf(const LogMapping& m) {
  std::vector<T> out;
  for (const auto& e : m.events)
    if (const auto* x = std::get_if<T>(&e)) out.push_back(*x);
  return out;
}

}  // namespace

class TestSchedulerLog : public QObject {
  Q_OBJECT
 private slots:
  void prefixVariants_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<int>("tp");
    QTest::addColumn<int>("dp");
    QTest::addColumn<QString>("message");
    QTest::newRow("TP") << "[2025-06-01 12:00:01 TP3] hello" << 3 << -1 << "hello";
    QTest::newRow("none") << "[2025-06-01 12:00:01] hello" << -1 << -1 << "hello";
    QTest::newRow("DP TP") << "[2025-06-01 12:00:01 DP1 TP7] hello" << 7 << 1 << "hello";
    QTest::newRow("DP") << "[2025-06-01 12:00:01 DP2] hello" << -1 << 2 << "hello";
    QTest::newRow("millis") << "[2025-06-01 12:00:01,123 TP0] hello" << 0 << -1 << "hello";
    // Every rank tag upstream prints (scheduler.py configure_scheduler_process), SGLANG_LOG_MS.
    QTest::newRow("all tags") << "[2025-06-01 12:00:01 DP1 PP0 ATTN_CP1 MOE_DP2 TP3 EP3] hello" << 3 << 1 << "hello";
    QTest::newRow("bare CP") << "[2025-06-01 12:00:01 CP1 TP2] hello" << 2 << -1 << "hello";
    QTest::newRow("log ms") << "[2025-06-01 12:00:01.271 DP0 TP0] hello" << 0 << 0 << "hello";
  }
  void prefixVariants() {
    QFETCH(QString, line);
    QFETCH(int, tp);
    QFETCH(int, dp);
    QFETCH(QString, message);
    const LogRecord r = SchedulerLogParser::parse(line.toStdString());
    QVERIFY(r.prefix.present);
    QCOMPARE(r.kind, LogLineKind::Unknown);
    QCOMPARE(r.prefix.tp, tp);
    QCOMPARE(r.prefix.dp, dp);
    QCOMPARE(r.prefix.timestamp, std::string("2025-06-01 12:00:01"));
    QCOMPARE(r.prefix.clock_s, std::int64_t(1748779201));  // date -u -d '2025-06-01 12:00:01' +%s
    QCOMPARE(QString::fromStdString(r.message), message);
  }

  void notAPrefix_data() {
    QTest::addColumn<QString>("line");
    QTest::newRow("month 13") << "[2025-13-01 12:00:01 TP0] x";
    QTest::newRow("cut date") << "[2025-06-01 12:0";
    QTest::newRow("lower tag") << "[2025-06-01 12:00:01 tp0] x";
    QTest::newRow("no bracket") << "[2025-06-01 12:00:01 TP0 x";
    QTest::newRow("traceback") << "  File \"/sgl/scheduler.py\", line 123, in event_loop";
    QTest::newRow("trailing underscore") << "[2025-06-01 12:00:01 ATTN_ TP0] x";
    QTest::newRow("leading underscore") << "[2025-06-01 12:00:01 _CP1] x";
    QTest::newRow("empty tags") << "[] x";
    QTest::newRow("bare traceback head") << "Traceback (most recent call last):";
  }

  // A logging config without asctime, and 2024's "[gpu_id=N] ".
  void prefixWithoutTime() {
    const LogRecord a = parse("[DP1 TP3] Decode batch, #running-req: 2, #token: 10, token usage: 0.01, #queue-req: 0");
    QVERIFY(a.prefix.present);
    QVERIFY(!a.prefix.has_time);
    QCOMPARE(a.prefix.tp, 3);
    QCOMPARE(a.prefix.dp, 1);
    QCOMPARE(a.kind, LogLineKind::DecodeBatch);
    const LogRecord g =
        parse("[gpu_id=1] Decode batch. #running-req: 8, #token: 2048, token usage: 0.01, #queue-req: 2");
    QCOMPARE(g.prefix.gpu, 1);
    QCOMPARE(g.batch.running_req, std::int64_t(8));
    QCOMPARE(parse("[2025-06-01 12:00:01.271 TP0] x").prefix.millis, 271);
    // Without any prefix a known message is still that message; anything else continues the last line.
    QCOMPARE(parse("Lost connection with prefill instance (bootstrap_addr: a:1), 2 requests affected").kind,
             LogLineKind::LostConnection);
    QCOMPARE(parse("    raise KVTransferError(self.bootstrap_room, failure_reason)").kind, LogLineKind::Continuation);
  }
  void notAPrefix() {
    QFETCH(QString, line);
    const LogRecord r = SchedulerLogParser::parse(line.toStdString());
    QVERIFY(!r.prefix.present);
    QCOMPARE(r.kind, LogLineKind::Continuation);
  }

  void correction() {
    const LogRecord r = parse(kCorrection);
    QCOMPARE(r.kind, LogLineKind::Correction);
    QCOMPARE(r.from, std::int64_t(6648));
    QCOMPARE(r.to, std::int64_t(0));
    QCOMPARE(r.fill_len, std::int64_t(6648));
    QCOMPARE(r.prefix_len, std::int64_t(43459));
    QCOMPARE(r.kv_committed_len, std::int64_t(43459));
    QCOMPARE(r.rid, std::string("4a1f"));
    QCOMPARE(r.session_id, std::string("1000195"));
  }

  void transferFailed() {
    const LogRecord p = parse(kPrefillFailed);
    QCOMPARE(p.kind, LogLineKind::TransferFailed);
    QCOMPARE(p.side, 'P');
    QCOMPARE(p.rank, 4);
    QCOMPARE(p.rid, std::string("7f3a9c"));
    QCOMPARE(p.bootstrap_room, std::string("6148"));
    QCOMPARE(p.remote, std::string("10.99.91.49:15295"));
    QVERIFY(p.exception.starts_with("KVTransferError(bootstrap_room=6148): Decode instance could be dead"));
    QVERIFY(!p.aborted);
    const LogRecord d = parse(kDecodeFailed);
    QCOMPARE(d.kind, LogLineKind::TransferFailed);
    QCOMPARE(d.side, 'D');
    QCOMPARE(d.rank, 2);
    QCOMPARE(d.prefix.dp, 1);
    QCOMPARE(d.rid, std::string("8b1c"));
    QCOMPARE(d.bootstrap_room, std::string("77"));
    QVERIFY(d.remote.empty());
    QVERIFY(d.exception.ends_with("it might be dead"));
    const LogRecord a = parse(
        "[2025-06-01 12:00:03 TP0] Prefill transfer failed for request rank=0 req.rid='9' "
        "req.bootstrap_room=5 with exception KVTransferError(bootstrap_room=5): Aborted by AbortReq.");
    QCOMPARE(a.kind, LogLineKind::TransferFailed);
    QVERIFY(a.aborted);
    const LogRecord t = parse(
        "[2025-06-01 12:00:03 TP0] Prefill bootstrap failed for request rank=0 req.rid='9' "
        "req.bootstrap_room=5 with exception KVTransferError(bootstrap_room=5): Request 5 timed out "
        "after 600.0s in KVPoll.Bootstrapping");
    QCOMPARE(t.kind, LogLineKind::TransferFailed);
    QCOMPARE(t.seconds, 600.0);
    QCOMPARE(t.poll_state, std::string("Bootstrapping"));
  }

  void simpleLines_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<int>("kind");
    QTest::newRow("exception")
        << "[2025-06-01 12:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):"
        << int(LogLineKind::SchedulerException);
    QTest::newRow("sigquit")
        << "[2025-06-01 12:00:02] Received sigquit from a child process. It usually means the child failed."
        << int(LogLineKind::Sigquit);
    QTest::newRow("aborted") << "[2025-06-01 12:00:02 TP0] Request rid=abc failed: Aborted by AbortReq."
                             << int(LogLineKind::Aborted);
    QTest::newRow("client") << "RuntimeError: generate stream ended before producing any token"
                            << int(LogLineKind::ClientGenerateError);
    QTest::newRow("client prefixed")
        << "[2025-06-01 12:00:02] request 12 failed: RuntimeError: generate stream ended before producing any token"
        << int(LogLineKind::ClientGenerateError);
    QTest::newRow("unknown") << "[2025-06-01 12:00:02 TP0] Load weight end." << int(LogLineKind::Unknown);
    QTest::newRow("session failed") << "[2025-06-01 12:00:02 TP0] Session 10.0.0.2:15295 failed."
                                    << int(LogLineKind::SessionFailed);
    QTest::newRow("session FAILED") << "[2025-06-01 12:00:02 TP0] session 10.0.0.2:15295 FAILED."
                                    << int(LogLineKind::SessionFailed);
    QTest::newRow("session other") << "[2025-06-01 12:00:02 TP0] Session 10.0.0.2:15295 opened"
                                   << int(LogLineKind::Unknown);
    QTest::newRow("old crash") << "[2024-10-21 14:05:00 TP0] Traceback (most recent call last):"
                               << int(LogLineKind::SchedulerException);
    QTest::newRow("reconnect") << "[2025-06-01 12:00:02 TP0] Attempting to reconnect to 10.0.0.9:8998..."
                               << int(LogLineKind::Reconnecting);
    QTest::newRow("waiting_timeout") << "[2025-06-01 12:00:02 TP0] Request 77 waiting_timeout"
                                     << int(LogLineKind::KvPollTimeout);
  }
  void simpleLines() {
    QFETCH(QString, line);
    QFETCH(int, kind);
    QCOMPARE(int(SchedulerLogParser::parse(line.toStdString()).kind), kind);
  }

  void kvPollLostRecovered() {
    const LogRecord w = parse("[2025-06-01 12:00:06 TP0] Request 6148 timed out after 12.3s in KVPoll.WaitingForInput");
    QCOMPARE(w.kind, LogLineKind::KvPollTimeout);
    QCOMPARE(w.seconds, 12.3);
    QCOMPARE(w.poll_state, std::string("WaitingForInput"));
    QCOMPARE(w.rid, std::string("6148"));
    QCOMPARE(parse("[2025-06-01 12:00:06] Request 9 timed out after 600.0s in KVPoll.Bootstrapping").poll_state,
             std::string("Bootstrapping"));
    const LogRecord l = parse(
        "[2025-06-01 12:00:07 TP0] Lost connection with prefill instance (bootstrap_addr: "
        "10.99.91.40:8998), 7 requests affected");
    QCOMPARE(l.kind, LogLineKind::LostConnection);
    QCOMPARE(l.remote, std::string("10.99.91.40:8998"));
    QCOMPARE(l.affected, 7);
    QCOMPARE(
        parse("[2025-06-01 12:00:07] Lost connection with prefill instance (bootstrap_addr: a:1), 2 transfers affected")
            .affected,
        2);
    const LogRecord s =
        parse("[2025-06-01 12:00:08 TP0] Session 10.99.91.49:15295 recovered via probe; un-blacklisted");
    QCOMPARE(s.kind, LogLineKind::RecoveredViaProbe);
    QCOMPARE(s.remote, std::string("10.99.91.49:15295"));
  }

  void batches() {
    const LogRecord d = parse(kDecodeBatch);
    QCOMPARE(d.kind, LogLineKind::DecodeBatch);
    QCOMPARE(d.batch.running_req, std::int64_t(12));
    QCOMPARE(d.batch.tokens, std::int64_t(80000));
    QCOMPARE(d.batch.token_usage, 0.61);
    QCOMPARE(d.batch.preallocated_usage, 0.05);
    QCOMPARE(d.batch.prealloc_req, std::int64_t(3));
    QCOMPARE(d.batch.transfer_req, std::int64_t(2));
    QCOMPARE(d.batch.retracted_req, std::int64_t(0));
    QCOMPARE(d.batch.cuda_graph, 1);
    QCOMPARE(d.batch.gen_throughput, 812.44);
    QCOMPARE(d.batch.queue_req, std::int64_t(4));
    // SGLang itself writes "Decode batch." with a period.
    QCOMPARE(parse("[2025-06-01 12:00:05 TP0] Decode batch. #running-req: 1, #token: 5, token usage: 0.00, "
                   "cuda graph: False, gen throughput (token/s): 1.0, #queue-req: 0")
                 .batch.cuda_graph,
             0);
    const LogRecord p = parse(kPrefillBatch);
    QCOMPARE(p.kind, LogLineKind::PrefillBatch);
    QCOMPARE(p.batch.new_seq, std::int64_t(1));
    QCOMPARE(p.batch.new_token, std::int64_t(6648));
    QCOMPARE(p.batch.cached_token, std::int64_t(43459));
    QCOMPARE(p.batch.token_usage, 0.33);
    QCOMPARE(p.batch.running_req, std::int64_t(2));
    QCOMPARE(p.batch.queue_req, std::int64_t(0));
  }

  void malformed_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("field");
    const QString c = "[2025-06-01 12:00:01 TP0] Correcting streaming-session extend_input_len from ";
    QTest::newRow("from word") << c + "x to 0 (fill_len=1, prefix_len=2, kv_committed_len=2)"
                               << "from";
    QTest::newRow("no fill_len") << c + "1 to 0 (prefix_len=2, kv_committed_len=2)"
                                 << "fill_len";
    QTest::newRow("negative prefix") << c + "1 to 0 (fill_len=1, prefix_len=-2, kv_committed_len=2)"
                                     << "prefix_len";
    QTest::newRow("cut") << c + "6648 to 0 (rid=4a1f, session_id=1000195, fill_len=66"
                         << "prefix_len";
    QTest::newRow("wrong number") << "[2025-06-01 12:00:05 TP0] Decode batch, #running-req: 1x2, #token: 5"
                                  << "#running-req";
    QTest::newRow("bad ratio") << "[2025-06-01 12:00:05 TP0] Prefill batch. #new-seq: 1, token usage: 1,5"
                               << "token usage";
    QTest::newRow("bad bool") << "[2025-06-01 12:00:05 TP0] Decode batch, #running-req: 1, cuda graph: maybe"
                              << "cuda graph";
    QTest::newRow("no running") << "[2025-06-01 12:00:05 TP0] Decode batch, #token: 5"
                                << "#running-req";
    QTest::newRow("lost no count")
        << "[2025-06-01 12:00:07] Lost connection with prefill instance (bootstrap_addr: a:1), many requests affected"
        << "affected";
    QTest::newRow("lost cut") << "[2025-06-01 12:00:07] Lost connection with prefill instance (bootstrap_add"
                              << "bootstrap_addr";
    QTest::newRow("transfer cut") << "[2025-06-01 12:00:03 TP4] Prefill transfer failed for request rank=4 req.rid='7f"
                                  << "exception";
    QTest::newRow("transfer rank")
        << "[2025-06-01 12:00:03 TP4] Decode transfer failed for request rank=four with exception X"
        << "rank";
    QTest::newRow("kvpoll secs") << "[2025-06-01 12:00:06] Request 9 timed out after soons in KVPoll.Bootstrapping"
                                 << "seconds";
    QTest::newRow("pool tokens") << "[2025-06-01 12:00:05 TP0] Decode batch, #running-req: 1, #full token: x"
                                 << "#full token";
    QTest::newRow("hit rate") << "[2025-06-01 12:00:05 TP0] Prefill batch. #new-seq: 1, cache hit rate: lots"
                              << "cache hit rate";
    QTest::newRow("retracted word") << "[2025-06-01 12:00:05 TP0] Decode out of memory happened. #retracted_reqs: "
                                       "some, #new_token_ratio: 0.1 -> 0.2"
                                    << "retracted_reqs";
    QTest::newRow("ratio arrow")
        << "[2025-06-01 12:00:05 TP0] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1 0.2"
        << "new_token_ratio";
    QTest::newRow("losing no count")
        << "[2025-06-01 12:00:07] Losing connection with prefill instance (bootstrap_addr: a:1), affected many requests"
        << "affected";
  }
  void malformed() {
    QFETCH(QString, line);
    QFETCH(QString, field);
    const LogRecord r = SchedulerLogParser::parse(line.toStdString());
    QCOMPARE(r.kind, LogLineKind::Malformed);
    QVERIFY2(QString::fromStdString(r.problem).startsWith("field '" + field + "'"), r.problem.c_str());
  }

  // A decode worker out of KV retracts requests: the count becomes one Retraction on that D (no
  // request ids in the line); a prefill's line or a retraction of none is no event.
  void decodeOutOfMemory() {
    const LiveAddressBook b = book();
    LogEventMapper d1(worker("D1", WorkerRole::Decode, 1), &b);
    const LogRecord now = parse(
        "[2025-03-07 21:49:33 TP13] Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.1474 -> "
        "0.1845");
    QCOMPARE(now.kind, LogLineKind::DecodeOutOfMemory);
    QCOMPARE(now.affected, 3);
    QCOMPARE(now.ratio_before, 0.1474);
    QCOMPARE(now.ratio_after, 0.1845);
    const auto x = eventsOf<Retraction>(d1.map(now));
    QCOMPARE(x.size(), std::size_t(1));
    QCOMPARE(x[0].worker, 1);
    QCOMPARE(x[0].requests.size(), std::size_t(3));
    QCOMPARE(x[0].new_token_ratio_after, 0.1845);
    // 2024's tp_worker.py: lower case and a comma; a line without the ratio still counts.
    const LogRecord old = parse(
        "[2024-03-01 10:00:00 TP0] decode out of memory happened, #retracted_reqs: 1, #new_token_ratio: 0.9998 -> "
        "1.0000");
    QCOMPARE(old.kind, LogLineKind::DecodeOutOfMemory);
    QCOMPARE(old.affected, 1);
    QCOMPARE(parse("[2025-06-01 12:00:05] Decode out of memory happened. #retracted_reqs: 2").affected, 2);
    QVERIFY(d1.map(parse("[2025-06-01 12:00:05] Decode out of memory happened. #retracted_reqs: 0, #new_token_ratio: "
                         "0.5 -> 0.5"))
                .events.empty());
    LogEventMapper p0(worker("P0", WorkerRole::Prefill, 0), &b);
    QVERIFY(p0.map(now).events.empty());
  }

  void garbageNeverThrows() {
    std::mt19937 rng(11);
    const std::string lines[] = {kCorrection, kPrefillFailed, kDecodeFailed, kDecodeBatch, kPrefillBatch};
    SchedulerLogReader reader;
    for (int i = 0; i < 3000; ++i) {
      std::string s = lines[i % 5];
      if (i % 3 == 0) s.resize(rng() % s.size());
      for (int k = 0; k < 3; ++k)
        if (!s.empty()) s[rng() % s.size()] = static_cast<char>(rng() % 256);
      for (const auto& r : reader.feed(s)) QVERIFY(r.message.size() <= SchedulerLogParser::kMaxMessage);
    }
    const std::string huge(1 << 20, 'x');
    QCOMPARE(SchedulerLogParser::parse("[2025-06-01 12:00:01] " + huge).message.size(),
             SchedulerLogParser::kMaxMessage);
  }

  void tracebackFoldsIntoOneCrash() {
    SchedulerLogReader reader;
    QCOMPARE(reader.feed(kCorrection).size(), std::size_t(1));
    QVERIFY(reader.feed("[2025-06-01 12:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):")
                .empty());
    QVERIFY(reader.feed("  File \"/sgl/managers/scheduler.py\", line 2310, in run_scheduler_process").empty());
    QVERIFY(reader.feed("    assert seq_len - pre_len == req.extend_input_len").empty());
    QVERIFY(reader.feed("AssertionError").empty());
    QVERIFY(reader.folding());
    const auto out =
        reader.feed("[2025-06-01 12:00:02] Received sigquit from a child process. It usually means the child failed.");
    QCOMPARE(out.size(), std::size_t(2));
    QCOMPARE(out[0].kind, LogLineKind::SchedulerException);
    QCOMPARE(out[0].exception, std::string("AssertionError"));
    QVERIFY(out[0].message.find("assert seq_len - pre_len") != std::string::npos);
    QCOMPARE(out[1].kind, LogLineKind::Sigquit);
    QCOMPARE(reader.counts().lines, 6L);
    QCOMPARE(reader.counts().known, 3L);
    QCOMPARE(reader.counts().folded, 3L);
    // A crash at the end of a file is released by flush().
    reader.feed("[2025-06-01 12:01:00 TP0] Scheduler hit an exception: boom");
    QVERIFY(reader.feed("ValueError: x").empty());
    QCOMPARE(reader.flush().at(0).exception, std::string("ValueError: x"));
    // A stray unprefixed line is unknown, never fatal.
    QVERIFY(reader.feed("stray text")[0].kind == LogLineKind::Continuation);
    QCOMPARE(reader.counts().unknown, 1L);
  }

  void mapsOntoEvents() {
    const LiveAddressBook b = book();
    LogEventMapper d1(worker("D1", WorkerRole::Decode, 1), &b);
    auto c = eventsOf<Correction>(d1.map(parse(kCorrection)));
    QCOMPARE(c.size(), std::size_t(1));
    QCOMPARE(c[0].worker, 1);
    QCOMPARE(c[0].fill_len, std::int64_t(6648));
    QCOMPARE(c[0].session, SessionId(1000195));

    SchedulerLogReader reader;
    reader.feed("[2025-06-01 12:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):");
    reader.feed("AssertionError");
    const auto crash = eventsOf<WorkerCrashed>(d1.map(reader.flush().at(0)));
    QCOMPARE(crash.size(), std::size_t(1));
    QCOMPARE(crash[0].worker, 1);
    QVERIFY(crash[0].reason.find("AssertionError") != std::string::npos);  // what the diagnosis looks for
    // The parent's sigquit right after is the same crash.
    QVERIFY(
        d1.map(parse("[2025-06-01 12:00:03] Received sigquit from a child process. It usually means the child failed."))
            .events.empty());
    QCOMPARE(
        eventsOf<WorkerCrashed>(d1.map(parse("[2025-06-01 13:00:03] Received sigquit from a child process."))).size(),
        std::size_t(1));

    // P0's log names D2 by its Mooncake session address.
    LogEventMapper p0(worker("P0", WorkerRole::Prefill, 0), &b);
    const LogMapping pf = p0.map(parse(kPrefillFailed));
    const auto links = eventsOf<LinkHealth>(pf);
    QCOMPARE(links.size(), std::size_t(1));
    QCOMPARE(links[0].prefill, 0);
    QCOMPARE(links[0].worker, 2);
    QCOMPARE(links[0].state, LinkState::Dead);
    QCOMPARE(eventsOf<TransferFinished>(pf).at(0).worker, 2);
    QVERIFY(eventsOf<RequestDone>(pf).at(0).error.find("could be dead") != std::string::npos);
    // The same link failing again is no new state change, but still a failed transfer and request.
    const LogMapping again = p0.map(parse(kPrefillFailed));
    QVERIFY(eventsOf<LinkHealth>(again).empty());
    QCOMPARE(eventsOf<RequestDone>(again).size(), std::size_t(1));
    // Recovery via probe brings it back.
    const auto alive = eventsOf<LinkHealth>(
        p0.map(parse("[2025-06-01 12:00:08 TP0] Session 10.99.91.49:15295 recovered via probe; un-blacklisted")));
    QCOMPARE(alive.at(0).state, LinkState::Alive);
    QCOMPARE(alive.at(0).worker, 2);

    // D1's log: lost connection names P0 by its bootstrap address; it carries the aborted count.
    const auto lost =
        eventsOf<LinkHealth>(d1.map(parse("[2025-06-01 12:00:07 TP0] Lost connection with prefill instance "
                                          "(bootstrap_addr: 10.99.91.40:8998), 7 requests affected")));
    QCOMPARE(lost.at(0).prefill, 0);
    QCOMPARE(lost.at(0).worker, 1);
    QCOMPARE(lost.at(0).state, LinkState::Dead);
    QCOMPARE(lost.at(0).aborted_requests, 7);
    // A KVPoll timeout: a failed request and a suspect link (P0 -> D1, from D1's own peer).
    LogEventMapper d0(worker("D0", WorkerRole::Decode, 0), &b);
    const LogMapping kv =
        d0.map(parse("[2025-06-01 12:00:06 TP0] Request 6148 timed out after 12.3s in KVPoll.WaitingForInput"));
    QCOMPARE(eventsOf<LinkHealth>(kv).at(0).state, LinkState::Suspect);
    QCOMPARE(eventsOf<RequestDone>(kv).at(0).request, RequestId(6148));
    // An AbortReq: a failed request, the link untouched.
    const LogMapping ab =
        d0.map(parse("[2025-06-01 12:00:03 TP0] Decode transfer failed for request rank=0 req.rid='9' "
                     "with exception KVTransferError(bootstrap_room=5): Aborted by AbortReq."));
    QVERIFY(eventsOf<LinkHealth>(ab).empty() && eventsOf<TransferFinished>(ab).empty());
    QCOMPARE(eventsOf<RequestDone>(ab).size(), std::size_t(1));
    QCOMPARE(
        eventsOf<RequestDone>(d0.map(parse("[2025-06-01 12:00:02 TP0] Request rid=abc failed: Aborted by AbortReq.")))
            .size(),
        std::size_t(1));
    // Batch lines are gauges.
    const LogMapping g = d0.map(parse(kDecodeBatch));
    QVERIFY(g.events.empty());
    QCOMPARE(g.gauges->running_req, std::int64_t(12));
    // The client's error is a failed request.
    const auto client =
        eventsOf<RequestDone>(d0.map(parse("RuntimeError: generate stream ended before producing any token")));
    QCOMPARE(client.at(0).status, RequestStatus::Failed);
    // A prefill crash kills every link from it.
    const auto dead =
        eventsOf<LinkHealth>(p0.map(parse("[2025-06-01 12:00:02] Received sigquit from a child process.")));
    QCOMPARE(dead.size(), std::size_t(3));
    for (const auto& l : dead) QCOMPARE(l.state, LinkState::Dead);
  }
};

QTEST_GUILESS_MAIN(TestSchedulerLog)
#include "test_scheduler_log.moc"
