#include "core/live/LogEventMapper.h"

#include <algorithm>
#include <charconv>

#include "core/events/EventLimits.h"

namespace kvscope {

namespace {

// SGLang request ids are hex strings; KVScope's are integers. A decimal id is kept, any other
// becomes 0 (the error text still carries it).
std::uint64_t numericId(const std::string& s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return (ec == std::errc() && end == s.data() + s.size()) ? v : 0;
}

// A request or session named by a client or SGLang as an id: a decimal id is kept; SGLang's uuid4
// hex gives its first 64 bits; any other name its FNV-1a hash. Never 0 (0 is "no id").
std::uint64_t idOf(const std::string& s) {
  if (const std::uint64_t v = numericId(s)) return v;
  std::uint64_t v = 0;
  if (s.size() >= 16) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + 16, v, 16);
    if (ec == std::errc() && end == s.data() + 16 && v != 0) return v;
  }
  v = 1469598103934665603ULL;
  for (const unsigned char c : s) v = (v ^ c) * 1099511628211ULL;
  return v ? v : 1;
}

std::string hostOf(const std::string& address) {
  const auto colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

}  // namespace

WorkerId LiveAddressBook::decode(const std::string& address) const {
  if (const auto it = decode_by_address.find(address); it != decode_by_address.end()) return it->second;
  // A Mooncake session port differs from the configured one: the host alone, when it is unique.
  WorkerId found = kNoWorker;
  for (const auto& [a, w] : decode_by_address) {
    if (hostOf(a) != hostOf(address)) continue;
    if (found != kNoWorker && found != w) return kNoWorker;
    found = w;
  }
  return found;
}

std::int32_t LiveAddressBook::prefill(const std::string& address) const {
  if (const auto it = prefill_by_address.find(address); it != prefill_by_address.end()) return it->second;
  std::int32_t found = -1;
  for (const auto& [a, p] : prefill_by_address) {
    if (hostOf(a) != hostOf(address)) continue;
    if (found >= 0 && found != p) return -1;
    found = p;
  }
  return found;
}

LogEventMapper::Link LogEventMapper::linkFor(const std::string& remote) const {
  Link l;
  if (ref_.role == WorkerRole::Prefill) {
    l.prefill = ref_.prefill;
    l.decode = book_ && !remote.empty() ? book_->decode(remote) : kNoWorker;
    if (l.decode == kNoWorker) l.decode = ref_.peer_decode;
  } else {
    l.decode = ref_.worker;
    l.prefill = book_ && !remote.empty() ? book_->prefill(remote) : -1;
    if (l.prefill < 0) l.prefill = ref_.peer_prefill;
  }
  return l;
}

void LogEventMapper::linkState(LogMapping& m, Link link, LinkState state, const std::string& reason, int aborted,
                               bool always) {
  if (!link.known()) return;
  auto& known = links_[{link.prefill, link.decode}];
  if (!always && known == state) return;
  known = state;
  LinkHealth h;
  h.prefill = link.prefill;
  h.worker = link.decode;
  h.state = state;
  h.reason = reason;
  h.aborted_requests = aborted;
  m.events.emplace_back(std::move(h));
}

void LogEventMapper::crash(LogMapping& m, const std::string& reason, std::int64_t clock_s, bool sigquit) {
  // One death, several witnesses: SGLang's sigquit after the crash, vLLM's executor, EngineCore
  // and client each saying it within a second or two.
  if (last_crash_s_ && clock_s - *last_crash_s_ <= (sigquit ? kSigquitEchoS : kSameDeathS)) return;
  last_crash_s_ = clock_s;
  if (ref_.role == WorkerRole::Prefill) {
    if (!book_) return;
    for (WorkerId d : book_->decode_workers)
      linkState(m, {ref_.prefill, d}, LinkState::Dead, ref_.name + " crashed: " + reason, 0, true);
    return;
  }
  WorkerCrashed c;
  c.worker = ref_.worker;
  c.reason = reason;
  m.events.emplace_back(std::move(c));
}

void LogEventMapper::failedRequest(LogMapping& m, const LogRecord& r, const std::string& error) {
  RequestDone d;
  d.request = numericId(r.rid);
  d.worker = ref_.role == WorkerRole::Prefill ? kNoWorker : ref_.worker;
  d.status = RequestStatus::Failed;
  d.error = error;
  m.events.emplace_back(std::move(d));
}

void LogEventMapper::mapRequestFinished(LogMapping& m, const LogRecord& r) {
  // Each request once, from the server that decoded it: in PD the prefill logs a line of its own
  // (one token, its own hit), whose cached tokens the decode's line repeats. Upstream's PD warm-up
  // (FAKE_BOOTSTRAP_HOST) and /health_generate are no one's traffic.
  if (ref_.role == WorkerRole::Prefill || r.bootstrap_host == "2.2.2.2" || r.rid.starts_with("HEALTH_CHECK")) return;
  RequestDone d;
  d.request = idOf(r.rid.empty() ? r.bootstrap_room : r.rid);
  d.worker = ref_.worker;
  d.turn = 1;
  d.session = d.request;  // no session named: a session of its own
  if (!r.session_id.empty()) {
    d.session = idOf(r.session_id);
    if (auto it = session_turns_.find(d.session); it != session_turns_.end())
      d.turn = ++it->second;
    else if (session_turns_.size() < kMaxSessions)
      session_turns_.emplace(d.session, 1);
  }
  if (r.finish_type == "abort") {
    d.status = RequestStatus::Failed;
    d.error = "aborted (SGLang finish_reason abort)";
  }
  d.ttft = r.ttft_s >= 0 ? secondsToTime(r.ttft_s) : -1;
  d.e2e = secondsToTime(r.e2e_s);
  d.input_tokens = r.prompt_tokens;
  d.output_tokens = r.completion_tokens;
  d.cached_tokens = r.cached_tokens;
  m.events.emplace_back(std::move(d));
}

bool LogEventMapper::firstReport(const LogRecord& r) {
  if (r.prefix.process.empty() || r.rid.empty()) return true;  // SGLang logs once per request
  if (!failed_rids_.insert(r.rid).second) return false;
  failed_order_.push_back(r.rid);
  if (failed_order_.size() > kRecentFailures) {
    failed_rids_.erase(failed_order_.front());
    failed_order_.pop_front();
  }
  return true;
}

void LogEventMapper::mapCorrection(LogMapping& m, const LogRecord& r) {
  if (ref_.role == WorkerRole::Prefill) return;  // the correction is a decode-side path
  Correction c;
  c.worker = ref_.worker;
  c.request = numericId(r.rid);
  c.session = numericId(r.session_id);
  c.fill_len = r.fill_len;
  c.prefix_len = r.prefix_len;
  c.kv_committed_len = r.kv_committed_len;
  c.fault = CorrectionFault::None;  // what follows (a crash or not) arrives as its own line
  m.events.emplace_back(c);
}

void LogEventMapper::mapTransferFailed(LogMapping& m, const LogRecord& r) {
  if (r.aborted) {  // an AbortReq ends the transfer: the request failed, the link is fine
    failedRequest(m, r, r.exception);
    return;
  }
  const Link link = linkFor(r.remote);
  if (link.known()) {
    TransferFinished t;
    t.request = numericId(r.rid);
    t.prefill = link.prefill;
    t.worker = link.decode;
    t.ok = false;
    t.reason = r.exception;
    m.events.emplace_back(std::move(t));
  }
  // The reasons upstream gives when it has given up on the peer (mooncake/conn.py,
  // common/conn.py); a failed chunk or a KVPoll timeout only makes the link suspect.
  const bool dead = r.exception.find("not alive") != std::string::npos ||
                    r.exception.find("could be dead") != std::string::npos ||
                    r.exception.find("might be dead") != std::string::npos ||
                    r.exception.find("now it is down") != std::string::npos ||
                    r.exception.find("Lost connection with prefill instance") != std::string::npos;
  linkState(m, link, dead ? LinkState::Dead : LinkState::Suspect, r.exception, dead ? 1 : 0, false);
  failedRequest(m, r, r.exception);
}

void LogEventMapper::mapAborted(LogMapping& m, const LogRecord& r) {
  // vLLM names several requests in one line ("Aborted request(s) a,b."): one failure each.
  std::string_view ids = r.rid;
  do {
    const auto comma = ids.find(',');
    LogRecord one = r;
    one.rid = std::string(ids.substr(0, comma));
    failedRequest(m, one, r.message);
    ids = comma == std::string_view::npos ? std::string_view() : ids.substr(comma + 1);
  } while (!ids.empty() && m.events.size() < kMaxAbortsPerLine);
}

void LogEventMapper::mapEngineStats(LogMapping& m, const LogRecord& r) {
  if (ref_.role == WorkerRole::Prefill) return;
  if (r.engines_aggregated > 0 || r.prefix.dp < 0) {  // the whole worker already
    engine_stats_.clear();
    m.gauges = r.batch;
    return;
  }
  engine_stats_[r.prefix.dp] = r.batch;
  // Data-parallel engines are one worker: requests add up, the KV use is their mean.
  BatchGauges sum;
  sum.running_req = sum.queue_req = 0;
  sum.token_usage = 0;
  for (const auto& [engine, b] : engine_stats_) {
    sum.running_req += std::max<std::int64_t>(b.running_req, 0);
    sum.queue_req += std::max<std::int64_t>(b.queue_req, 0);
    sum.token_usage += std::max(b.token_usage, 0.0) / static_cast<double>(engine_stats_.size());
  }
  m.gauges = sum;
}

void LogEventMapper::mapKvCacheSize(LogMapping& m, const LogRecord& r) {
  if (ref_.role == WorkerRole::Prefill) return;
  engine_capacity_[r.prefix.process] = r.batch.capacity_tokens;  // one line per EngineCore (DP rank)
  BatchGauges g;
  g.capacity_tokens = 0;
  for (const auto& [process, tokens] : engine_capacity_) g.capacity_tokens += tokens;
  m.gauges = g;
}

void LogEventMapper::mapDecodeOutOfMemory(LogMapping& m, const LogRecord& r) {
  if (ref_.role == WorkerRole::Prefill || r.affected <= 0) return;
  Retraction x;
  x.worker = ref_.worker;
  // The line counts the retracted requests but names none: each is request 0, the id a log
  // line that names no request gets everywhere here (numericId), so counts and sums hold.
  x.requests.assign(static_cast<std::size_t>(std::min<int>(r.affected, kMaxRetractedRequests)), RequestId{0});
  x.new_token_ratio_before = std::max(0.0, r.ratio_before);
  x.new_token_ratio_after = std::max(0.0, r.ratio_after);
  m.events.emplace_back(std::move(x));
}

LogMapping LogEventMapper::map(const LogRecord& r) {
  LogMapping m;
  if ((r.kind == LogLineKind::TransferFailed || r.kind == LogLineKind::KvPollTimeout) && !firstReport(r)) return m;
  switch (r.kind) {
    case LogLineKind::Correction:
      mapCorrection(m, r);
      break;
    case LogLineKind::SchedulerException: {
      std::string reason = r.message.substr(0, r.message.find('\n'));
      if (!r.exception.empty()) reason += " / " + r.exception;
      crash(m, reason, r.prefix.clock_s, false);
      break;
    }
    case LogLineKind::Sigquit:
      crash(m, r.message, r.prefix.clock_s, true);
      break;
    case LogLineKind::TransferFailed:
      mapTransferFailed(m, r);
      break;
    case LogLineKind::KvPollTimeout:
      linkState(m, linkFor({}), LinkState::Suspect, r.message, 0, false);
      // `Request R waiting_timeout` (no seconds) precedes the transfer failure that fails the request.
      if (r.seconds >= 0) failedRequest(m, r, r.message);
      break;
    case LogLineKind::Aborted:
      mapAborted(m, r);
      break;
    case LogLineKind::EngineStats:
      mapEngineStats(m, r);
      break;
    case LogLineKind::KvCacheSize:
      mapKvCacheSize(m, r);
      break;
    case LogLineKind::LostConnection:
      // Always an event: it carries how many requests the dead link aborted.
      linkState(m, linkFor(r.remote), LinkState::Dead, r.message, std::max(r.affected, 0), true);
      break;
    case LogLineKind::RecoveredViaProbe:
      linkState(m, linkFor(r.remote), LinkState::Alive, r.message, 0, false);
      break;
    // The prefill blacklists the decode's Mooncake session: every later transfer to it fails fast
    // with "remote mooncake session ... is not alive" until a probe un-blacklists it.
    case LogLineKind::SessionFailed:
      linkState(m, linkFor(r.remote), LinkState::Dead, r.message, 0, false);
      break;
    // A missed heartbeat (the decode retries; `Lost connection` follows if it keeps failing), or a
    // bootstrap server that did not answer.
    case LogLineKind::Reconnecting:
    case LogLineKind::BootstrapError:
      linkState(m, linkFor(r.remote), LinkState::Suspect, r.message, 0, false);
      break;
    case LogLineKind::TimeoutHint:
      break;
    case LogLineKind::DecodeBatch:
    case LogLineKind::PrefillBatch:
      if (ref_.role != WorkerRole::Prefill) m.gauges = r.batch;
      break;
    case LogLineKind::ClientGenerateError: {
      RequestDone d;
      d.status = RequestStatus::Failed;
      d.error = "RuntimeError: generate stream ended before producing any token";
      m.events.emplace_back(std::move(d));
      break;
    }
    case LogLineKind::DecodeOutOfMemory:
      mapDecodeOutOfMemory(m, r);
      break;
    case LogLineKind::RequestFinished:
      mapRequestFinished(m, r);
      break;
    case LogLineKind::MooncakeGlog:  // the consumer's MooncakeLogMapper maps it
    case LogLineKind::Unknown:
    case LogLineKind::Continuation:
    case LogLineKind::Malformed:
      break;
  }
  return m;
}

}  // namespace kvscope
