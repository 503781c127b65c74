#include "core/live/SchedulerLogReader.h"

namespace kvscope {

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

void SchedulerLogReader::count(const LogRecord& r) {
  switch (r.kind) {
    case LogLineKind::Unknown:
    case LogLineKind::Continuation:
      ++counts_.unknown;
      shapes_.add(r.message);
      break;
    case LogLineKind::Malformed:
      ++counts_.malformed;
      break;
    default:
      ++counts_.known;
      break;
  }
}

std::vector<LogRecord> SchedulerLogReader::overlong(std::size_t max_bytes) {
  ++counts_.lines;
  std::vector<LogRecord> out = flush();
  LogRecord r;
  r.kind = LogLineKind::Malformed;
  r.problem = "the line is longer than " + std::to_string(max_bytes) + " bytes; not read";
  count(r);
  out.push_back(std::move(r));
  return out;
}

std::vector<LogRecord> SchedulerLogReader::feed(std::string_view line) {
  ++counts_.lines;
  LogRecord r = SchedulerLogParser::parse(line);
  std::vector<LogRecord> out;
  if (r.prefix.present && !r.prefix.has_year) {  // a vLLM line (VllmLogParser)
    const auto it = open_.find(r.prefix.process);
    if (it != open_.end()) {
      // The next line of a record its process had left open: a traceback frame or the message's
      // next line; its last line names the exception.
      Open& o = it->second;
      ++o.lines;
      ++counts_.folded;
      if (const std::string_view text = trimmed(r.message); !text.empty()) {
        if (o.record.message.size() + text.size() + 1 <= SchedulerLogParser::kMaxMessage)
          o.record.message += "\n" + std::string(text);
        o.record.exception = std::string(text);
      }
      if (r.prefix.continues && o.lines < kMaxTracebackLines) return out;
      count(o.record);
      out.push_back(std::move(o.record));
      open_.erase(it);
      return out;
    }
    // Lines of other processes may come between a record's lines: each process has its own.
    if (r.prefix.continues && open_.size() < kMaxOpenRecords) {
      std::string process = r.prefix.process;  // before r is moved from
      open_.emplace(std::move(process), Open{std::move(r), 0});
      return out;
    }
  }
  if (crash_) {
    if (r.kind == LogLineKind::Continuation && folded_lines_ < kMaxTracebackLines) {
      ++folded_lines_;
      ++counts_.folded;
      const std::string_view text = trimmed(r.message);
      if (!text.empty()) {
        if (crash_->message.size() + text.size() + 1 <= SchedulerLogParser::kMaxMessage)
          crash_->message += "\n" + std::string(text);
        // The traceback's last line names the exception; the lines before it are frames.
        crash_->exception = std::string(text);
      }
      return out;
    }
    out = flush();
  }
  if (r.kind == LogLineKind::SchedulerException) {
    crash_ = std::move(r);
    folded_lines_ = 0;
    return out;
  }
  count(r);
  out.push_back(std::move(r));
  return out;
}

std::vector<LogRecord> SchedulerLogReader::flush() {
  std::vector<LogRecord> out;
  for (auto& [process, o] : open_) {
    count(o.record);
    out.push_back(std::move(o.record));
  }
  open_.clear();
  if (!crash_) return out;
  count(*crash_);
  out.push_back(std::move(*crash_));
  crash_.reset();
  folded_lines_ = 0;
  return out;
}

}  // namespace kvscope
