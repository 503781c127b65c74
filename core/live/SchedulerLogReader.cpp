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
    case LogLineKind::Malformed: ++counts_.malformed; break;
    default: ++counts_.known; break;
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
  if (!crash_) return out;
  count(*crash_);
  out.push_back(std::move(*crash_));
  crash_.reset();
  folded_lines_ = 0;
  return out;
}

}  // namespace kvscope
