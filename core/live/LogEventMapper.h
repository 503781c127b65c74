#pragma once
// Turns one worker's log records into the events every consumer already understands:
// a correction -> Correction; a scheduler exception or sigquit -> WorkerCrashed (a
// prefill crash kills every link from it: LinkHealth Dead on each); a transfer failure -> a failed
// TransferFinished and a failed RequestDone carrying the exception, plus LinkHealth when the link's
// state changes; a KVPoll timeout -> a failed request and a suspect link; lost connection ->
// LinkHealth Dead with the requests it aborted; recovered via probe -> LinkHealth Alive; a failed
// Mooncake session -> LinkHealth Dead; a heartbeat reconnect attempt -> LinkHealth Suspect; an abort
// or the client's generate error -> a failed RequestDone; batch lines -> gauges for the next Snapshot;
// a request line (SGLang --log-requests) of a decode or unified worker -> its RequestDone, with sizes.
// Which P/D pair a line names comes from the file's worker and the cluster's address book.
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/live/SchedulerLogParser.h"
#include "core/live/WorkerMetricsTracker.h"

namespace kvscope {

// Addresses the logs mention, as the cluster file maps them to workers.
struct LiveAddressBook {
  std::map<std::string, WorkerId> decode_by_address;       // Mooncake session HOST:PORT -> D
  std::map<std::string, std::int32_t> prefill_by_address;  // bootstrap HOST:PORT -> P
  std::vector<WorkerId> decode_workers;                    // every D (a P crash kills its links to all)

  WorkerId decode(const std::string& address) const;       // kNoWorker when unknown
  std::int32_t prefill(const std::string& address) const;  // -1 when unknown
};

struct LogMapping {
  std::vector<EventPayload> events;
  std::optional<BatchGauges> gauges;  // a batch line: this worker's newest load
};

class LogEventMapper {
 public:
  // A sigquit this soon (log clock) after a crash of the same worker is that crash's echo.
  static constexpr std::int64_t kSigquitEchoS = 60;
  // A crash this soon after another of the same worker is the same death, told by another process.
  static constexpr std::int64_t kSameDeathS = 5;
  static constexpr std::size_t kRecentFailures = 1024;  // request ids remembered to count a failure once
  static constexpr std::size_t kMaxAbortsPerLine = 1024;

  LogEventMapper(LiveWorkerRef worker, const LiveAddressBook* book) : ref_(std::move(worker)), book_(book) {}

  LogMapping map(const LogRecord& r);
  const LiveWorkerRef& ref() const { return ref_; }

 private:
  struct Link {
    std::int32_t prefill = -1;
    WorkerId decode = kNoWorker;
    bool known() const { return prefill >= 0 && decode != kNoWorker; }
  };
  Link linkFor(const std::string& remote) const;
  void linkState(LogMapping& m, Link link, LinkState state, const std::string& reason, int aborted, bool always);
  void crash(LogMapping& m, const std::string& reason, std::int64_t clock_s, bool sigquit);
  void failedRequest(LogMapping& m, const LogRecord& r, const std::string& error);
  // map() for the line kinds that take more than a call: one function per kind.
  void mapCorrection(LogMapping& m, const LogRecord& r);
  void mapTransferFailed(LogMapping& m, const LogRecord& r);
  void mapAborted(LogMapping& m, const LogRecord& r);
  void mapEngineStats(LogMapping& m, const LogRecord& r);
  void mapKvCacheSize(LogMapping& m, const LogRecord& r);
  void mapDecodeOutOfMemory(LogMapping& m, const LogRecord& r);
  void mapRequestFinished(LogMapping& m, const LogRecord& r);

  LiveWorkerRef ref_;
  const LiveAddressBook* book_;
  std::map<std::pair<std::int32_t, WorkerId>, LinkState> links_;
  // vLLM: each data-parallel engine's last stats line (summed into the worker's gauges), each
  // EngineCore's KV cache size, and the requests whose transfer failure one TP rank reported
  // already (every rank logs the same failure).
  std::map<int, BatchGauges> engine_stats_;
  std::map<std::string, std::int64_t> engine_capacity_;
  std::set<std::string> failed_rids_;
  // --log-requests: the turns seen per named session (a session's requests finish in turn order).
  static constexpr std::size_t kMaxSessions = 1 << 20;
  std::map<SessionId, std::int32_t> session_turns_;
  std::deque<std::string> failed_order_;
  bool firstReport(const LogRecord& r);
  std::optional<std::int64_t> last_crash_s_;
};

}  // namespace kvscope
