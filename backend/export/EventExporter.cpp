#include "backend/export/EventExporter.h"
#include "core/model/Overloaded.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/events/EventJson.h"
#include "core/io/AtomicFile.h"
#include "core/model/Error.h"

namespace kvscope {

namespace {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// One row per event: the columns every kind shares, then the kind's own fields as JSON.
class CsvExporter : public EventExporter {
 public:
  explicit CsvExporter(std::string path) : EventExporter(std::move(path)) {
    out_ << "seq,time_s,kind,worker,session,request,detail\n";
  }
  void write(const Event& e) override {
    nlohmann::json j = eventToJson(e);
    auto take = [&](const char* key) {
      if (!j.contains(key)) return std::string();
      std::string v = j[key].dump();
      j.erase(key);
      return v;
    };
    j.erase("seq");
    j.erase("t_us");
    j.erase("kind");
    char time[32];
    std::snprintf(time, sizeof time, "%.6f", timeToSeconds(e.time));
    const std::string worker = take("worker"), session = take("session"), request = take("request");
    out_ << e.seq << ',' << time << ',' << eventKindName(e.payload) << ',' << worker << ',' << session << ',' << request
         << ',' << csvField(j.dump()) << '\n';
  }
  void writeNote(const RunNote& n) override {
    char time[32];
    std::snprintf(time, sizeof time, "%.6f", timeToSeconds(n.time));
    out_ << ',' << time << ",note,,,," << csvField(nlohmann::json{{"text", n.text}}.dump()) << '\n';
  }
};

class JsonLinesExporter : public EventExporter {
 public:
  explicit JsonLinesExporter(std::string path) : EventExporter(std::move(path)) {}
  void write(const Event& e) override { out_ << eventToJson(e).dump() << '\n'; }
  void writeNote(const RunNote& n) override {
    out_ << nlohmann::json{{"kind", "note"}, {"t_us", n.time}, {"text", n.text}}.dump() << '\n';
  }
};

// Trace Event Format: a process per worker, a track per session inside it (a session's turns never
// overlap), requests as complete slices, evictions / crashes / link failures as instants and KV use
// as a counter per worker.
class ChromeTraceExporter : public EventExporter {
 public:
  explicit ChromeTraceExporter(std::string path) : EventExporter(std::move(path)) { out_ << "{\"traceEvents\":[\n"; }

  void writeNote(const RunNote& n) override {
    // Global scope: Perfetto draws it across every track, as the console does on every time view.
    emit({{"ph", "i"},
          {"s", "g"},
          {"name", "note: " + n.text},
          {"pid", kLinksPid},
          {"tid", 0},
          {"ts", n.time},
          {"args", {{"text", n.text}}}});
  }
  void write(const Event& e) override {
    using nlohmann::json;
    std::visit(
        Overloaded{
            [&](const RunStarted& r) {
              for (std::size_t w = 0; w < r.workers.size(); ++w)
                emit({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", pid(static_cast<WorkerId>(w))},
                      {"args", {{"name", r.workers[w].name + " (" + toString(r.workers[w].role) + ")"}}}});
              emit({{"ph", "M"}, {"name", "process_name"}, {"pid", kLinksPid}, {"args", {{"name", "Mooncake links"}}}});
            },
            [&](const RequestDone& d) {
              if (d.worker < 0) return;
              emit({{"ph", "X"},
                    {"name", "turn " + std::to_string(d.turn)},
                    {"cat", toString(d.status)},
                    {"pid", pid(d.worker)},
                    {"tid", d.session},
                    {"ts", e.time - d.e2e},
                    {"dur", d.e2e},
                    {"args",
                     {{"request", d.request},
                      {"path", toString(d.path)},
                      {"ttft_us", d.ttft},
                      {"input_tokens", d.input_tokens},
                      {"output_tokens", d.output_tokens},
                      {"error", d.error}}}});
            },
            [&](const Eviction& v) {
              instant(e, pid(v.worker), "eviction", {{"tokens_freed", v.tokens_freed}, {"session", v.session}});
            },
            [&](const Retraction& r) {
              instant(e, pid(r.worker), "retraction",
                      {{"requests", r.requests},
                       {"tokens_freed", r.tokens_freed},
                       {"new_token_ratio", {r.new_token_ratio_before, r.new_token_ratio_after}}});
            },
            [&](const WorkerCrashed& c) {
              instant(e, pid(c.worker), "crash", {{"reason", c.reason}, {"aborted", c.aborted_requests}});
            },
            [&](const WorkerRestarted& r) { instant(e, pid(r.worker), "restart", json::object()); },
            [&](const Correction& c) {
              instant(e, pid(c.worker), "correction", {{"fill_len", c.fill_len}, {"prefix_len", c.prefix_len}});
            },
            [&](const LinkHealth& l) {
              instant(e, kLinksPid,
                      std::string("P") + std::to_string(l.prefill) + "->" + std::to_string(l.worker) + " " +
                          toString(l.state),
                      {{"reason", l.reason}, {"aborted", l.aborted_requests}});
            },
            [&](const KnobChanged& k) {
              json args{{"old", k.old_value}, {"new", k.new_value}, {"who", k.who}};
              if (k.origin.remote()) args.update({{"peer", k.origin.peer}, {"identity", k.origin.identity}});
              instant(e, kLinksPid, "knob " + k.name, std::move(args));
            },
            [&](const RunControlChanged& c) {
              json args{{"speed", c.speed}, {"who", c.who}};
              if (c.origin.remote()) args.update({{"peer", c.origin.peer}, {"identity", c.origin.identity}});
              if (c.action == RunAction::Seek) args["target_us"] = c.target;
              instant(e, kLinksPid, std::string("run ") + toString(c.action), std::move(args));
            },
            [&](const Snapshot& s) {
              for (const auto& g : s.workers)
                emit({{"ph", "C"},
                      {"name", "kv_used_tokens"},
                      {"pid", pid(g.worker)},
                      {"ts", e.time},
                      {"args", {{"used", g.kv_used}, {"peak", g.kv_peak}}}});
            },
            [](const auto&) {},
        },
        e.payload);
  }

 private:
  static constexpr int kLinksPid = 1000;
  static int pid(WorkerId w) { return w + 1; }
  void emit(const nlohmann::json& j) {
    out_ << (first_ ? "" : ",\n") << j.dump();
    first_ = false;
  }
  void instant(const Event& e, int pid, const std::string& name, nlohmann::json args) {
    emit(
        {{"ph", "i"}, {"s", "p"}, {"name", name}, {"pid", pid}, {"tid", 0}, {"ts", e.time}, {"args", std::move(args)}});
  }
  void writeFooter() override { out_ << "\n],\"displayTimeUnit\":\"ms\"}\n"; }
  bool first_ = true;
};

}  // namespace

EventExporter::EventExporter(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    out_.rdbuf(std::cout.rdbuf());
    return;
  }
  std::string error;
  const auto target = AtomicFile::target(path_, &error);
  if (!target) throw InputError(error);
  partial_ = AtomicFile::partialPath(*target);
  removed_on_interrupt_ = std::make_unique<TemporaryFiles::Guard>(partial_);
  if (!file_.open(partial_, std::ios::out | std::ios::binary | std::ios::trunc))
    throw InputError(formatInputError(path_, 0, "", "cannot create the file"));
  out_.rdbuf(&file_);
}

EventExporter::~EventExporter() {
  if (!finished_ && !partial_.empty()) {
    file_.close();
    std::remove(partial_.c_str());
  }
}

bool EventExporter::parseFormat(const std::string& name, Format& out) {
  static const std::map<std::string, Format> names{
      {"csv", Format::Csv}, {"jsonl", Format::JsonLines}, {"chrome-trace", Format::ChromeTrace}};
  auto it = names.find(name);
  if (it == names.end()) return false;
  out = it->second;
  return true;
}

std::unique_ptr<EventExporter> EventExporter::create(Format format, const std::string& path) {
  switch (format) {
    case Format::Csv:
      return std::make_unique<CsvExporter>(path);
    case Format::JsonLines:
      return std::make_unique<JsonLinesExporter>(path);
    case Format::ChromeTrace:
      return std::make_unique<ChromeTraceExporter>(path);
  }
  return nullptr;
}

void EventExporter::setNotes(std::vector<RunNote> notes) {
  notes_ = std::move(notes);
  next_note_ = 0;
}

void EventExporter::onEvent(const Event& e) {
  for (; next_note_ < notes_.size() && notes_[next_note_].time <= e.time; ++next_note_) writeNote(notes_[next_note_]);
  write(e);
}

bool EventExporter::finish(std::string* error) {
  for (; next_note_ < notes_.size(); ++next_note_) writeNote(notes_[next_note_]);
  writeFooter();
  finished_ = true;
  out_.flush();
  if (partial_.empty()) {  // standard output: a full disk or a closed pipe is a failed export
    if (!out_.good() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      if (error) *error = "standard output: could not write the export: " + std::string(std::strerror(errno));
      return false;
    }
    return true;
  }
  const bool written = out_.good() && file_.close() != nullptr;
  if (!written) {
    if (error) *error = path_ + ": could not write the export";
    std::remove(partial_.c_str());
    return false;
  }
  return AtomicFile::moveIntoPlace(partial_, path_, error);
}

}  // namespace kvscope
