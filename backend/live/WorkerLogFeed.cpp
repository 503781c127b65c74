#include "backend/live/WorkerLogFeed.h"

#include <filesystem>

#include "core/model/Overloaded.h"

namespace kvscope {

WorkerLogFeed::WorkerLogFeed(std::string path, Kind kind, std::optional<LiveWorkerRef> worker,
                             const LiveAddressBook* book)
    : path_(std::move(path)), kind_(worker ? kind : Kind::Client), worker_(std::move(worker)), book_(book) {
  if (!worker_) return;
  if (kind_ == Kind::Mooncake)
    mooncake_ = std::make_unique<MooncakeLogMapper>(*worker_, book_);
  else
    mapper_ = std::make_unique<LogEventMapper>(*worker_, book_);
}

std::vector<LogItem> WorkerLogFeed::read(std::string_view line) {
  std::vector<LogItem> out;
  if (kind_ == Kind::Mooncake) {
    const MooncakeLogRecord r = MooncakeLogParser::parse(line);
    mooncake_->count(r);
    out.emplace_back(r);
    return out;
  }
  for (LogRecord& r : reader_.feed(line)) {
    // The engine shares the worker's stderr: its glog lines are the engine's, not the scheduler's.
    if (r.kind == LogLineKind::MooncakeGlog && worker_) {
      if (!mooncake_) mooncake_ = std::make_unique<MooncakeLogMapper>(*worker_, book_);
      const MooncakeLogRecord m = MooncakeLogParser::parse(r.message);
      mooncake_->count(m);
      out.emplace_back(m);
      continue;
    }
    out.emplace_back(std::move(r));
  }
  return out;
}

std::vector<LogItem> WorkerLogFeed::readOverlong(std::size_t max_bytes) {
  std::vector<LogItem> out;
  for (LogRecord& r : reader_.overlong(max_bytes)) out.emplace_back(std::move(r));
  return out;
}

std::vector<LogItem> WorkerLogFeed::flush() {
  std::vector<LogItem> out;
  for (LogRecord& r : reader_.flush()) out.emplace_back(std::move(r));
  return out;
}

LogMapping WorkerLogFeed::map(const LogItem& item) {
  return std::visit(Overloaded{
                        [&](const MooncakeLogRecord& r) { return mooncake_ ? mooncake_->map(r) : LogMapping{}; },
                        [&](const LogRecord& r) {
                          if (mapper_) return mapper_->map(r);
                          LogMapping m;  // a client log: only its failed requests mean something
                          if (r.kind != LogLineKind::ClientGenerateError) return m;
                          RequestDone d;
                          d.status = RequestStatus::Failed;
                          d.error = "RuntimeError: generate stream ended before producing any token";
                          m.events.emplace_back(std::move(d));
                          return m;
                        },
                    },
                    item);
}

void WorkerLogFeed::apply(const LogItem& item, LiveCluster& cluster) {
  LogMapping m = map(item);
  if (m.gauges && worker_) cluster.setBatchGauges(worker_->worker, *m.gauges);
  if (!m.events.empty()) cluster.post(std::move(m.events));
}

std::optional<std::int64_t> WorkerLogFeed::timeOf(const LogItem& item) {
  return std::visit(Overloaded{
                        [](const MooncakeLogRecord& r) -> std::optional<std::int64_t> {
                          if (r.kind == MooncakeLineKind::NotGlog) return std::nullopt;
                          return r.clock_s * 1'000'000 + r.micros;
                        },
                        [](const LogRecord& r) -> std::optional<std::int64_t> {
                          if (!r.prefix.has_time) return std::nullopt;
                          return r.prefix.clock_s * 1'000'000 + std::max(r.prefix.millis, 0) * 1'000;
                        },
                    },
                    item);
}

std::vector<std::string> WorkerLogFeed::notes(const LiveLogStats& s) {
  std::vector<std::string> out;
  const std::string name = std::filesystem::path(s.path).filename().string();
  if (s.lines.malformed > 0)
    out.push_back(name + ": " + std::to_string(s.lines.malformed) + " of " + std::to_string(s.lines.lines) +
                  " lines malformed (a known format with a bad field)");
  for (const auto& shape : s.unknown_shapes) out.push_back(name + ": " + LineShapeCounter::describe(shape));
  return out;
}

LiveLogStats WorkerLogFeed::stats(std::size_t shapes) const {
  LiveLogStats s{
      path_, worker_ ? worker_->name : std::string(), {}, reader_.counts(), reader_.unknownShapes().top(shapes), false};
  if (kind_ == Kind::Mooncake) {
    const MooncakeLineCounts& c = mooncake_->counts();
    // An overlong line went to the reader, which parsed nothing else of this file.
    s.lines = {c.lines + reader_.counts().lines, c.known, c.unknown + c.not_glog, reader_.counts().malformed, 0};
    s.unknown_shapes = mooncake_->unknownShapes().top(shapes);
    s.mooncake = true;
  } else if (mooncake_) {
    for (const auto& shape : mooncake_->unknownShapes().top(shapes))
      if (s.unknown_shapes.size() < shapes) s.unknown_shapes.push_back(shape);
  }
  return s;
}

}  // namespace kvscope
