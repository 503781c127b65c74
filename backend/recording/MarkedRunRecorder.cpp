#include "backend/recording/MarkedRunRecorder.h"

#include <fcntl.h>
#include <stdio.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>

#include "core/io/AtomicFile.h"
#include "core/model/Error.h"
#include "core/run/RunMarkBook.h"

namespace kvscope {

namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxSlugBytes = 48;  // names may be 128 bytes; file names stay readable

// An earlier session's runs in `dir`: this session numbers its runs from 1 again and would
// overwrite them.
bool holdsRuns(const fs::path& dir) {
  static const std::regex run_file(R"(\d{3,}-.*\.(kvrec|json))");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "runs.json" || std::regex_match(name, run_file)) return true;
  }
  return false;
}

// What a killed session left behind: its open run's recording (and perhaps a summary being written)
// under a hidden ".NAME.partial" name, which this session would otherwise reuse and truncate. Each is
// renamed to "recovered-STEM-N.EXT" (the recording is a readable one, cut short), never overwriting
// anything; returns the new names.
std::vector<std::string> recoverPartials(const fs::path& dir) {
  static const std::regex partial(R"(\.((\d{3,}-.*|runs)\.(kvrec|json))\.partial)");
  std::vector<std::string> recovered;
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && std::regex_match(name, m, partial)) found.push_back(entry.path());
  }
  for (const auto& from : found) {
    const fs::path kept(from.filename().string().substr(1, from.filename().string().size() - 1 - 8));  // NAME
    for (int n = 1; n < 1000; ++n) {
      const fs::path to =
          dir / ("recovered-" + kept.stem().string() + "-" + std::to_string(n) + kept.extension().string());
      if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
        recovered.push_back(to.string());
        break;
      }
      if (errno != EEXIST)
        throw InputError("--runs " + dir.string() + ": cannot keep " + from.filename().string() +
                         " (left by a session that was killed): " + std::strerror(errno));
    }
  }
  return recovered;
}

// The "run" object of a run's summary, which runs.json lists too.
nlohmann::json runObject(const MarkedRun& run, const std::string& recording) {
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& [name, value] : run.start.parameters) parameters.push_back({name, value});
  return {{"index", run.start.index},
          {"name", run.start.name},
          {"parameters", parameters},
          {"session_start_us", run.session_start},
          {"session_end_us", run.session_end},
          {"ended_by", run.ended_by},
          {"recording", recording}};
}
}  // namespace

std::string MarkedRunRecorder::fileStem(std::uint32_t index, const std::string& name) {
  char number[16];
  std::snprintf(number, sizeof number, "%03u-", index);
  std::string stem = number;
  for (const char c : name.substr(0, kMaxSlugBytes)) stem += isRunNameChar(c) ? c : '-';
  return stem;
}

MarkedRunRecorder::MarkedRunRecorder(std::string dir, Completed completed)
    : dir_(std::move(dir)),
      completed_(std::move(completed)),
      splitter_(
          {[this](const RunMarked& start) { return opened(start); }, [this](const MarkedRun& run) { closed(run); }}) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw InputError("--runs " + dir_ + ": cannot create the directory: " + ec.message());
  if (!fs::is_directory(dir_, ec)) throw InputError("--runs " + dir_ + ": not a directory");
  // A real write, not access(2): root passes access checks on a read-only mount.
  std::string why;
  const std::string probe = (fs::path(dir_) / ".kvscope-write-test").string();
  if (!AtomicFile::write(probe, "", &why))
    throw InputError("--runs " + dir_ + ": the directory is not writable: " + why);
  fs::remove(probe, ec);
  if (holdsRuns(dir_))
    throw InputError("--runs " + dir_ + ": already holds the runs of an earlier session; give an empty directory");
  recovered_ = recoverPartials(dir_);
  writer_ = std::thread([this] { writerLoop(); });
}

MarkedRunRecorder::~MarkedRunRecorder() { close(nullptr); }

EventSink* MarkedRunRecorder::opened(const RunMarked& start) {
  const std::string path = (fs::path(dir_) / (fileStem(start.index, start.name) + ".kvrec")).string();
  open_ = std::make_unique<EventRecorder>(AtomicFile::partialPath(path));
  return open_.get();
}

void MarkedRunRecorder::closed(const MarkedRun& run) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Finished{std::move(open_), run});
  }
  wake_.notify_one();
}

void MarkedRunRecorder::onEvent(const Event& e) {
  last_seq_ = e.seq;
  last_time_ = e.time;
  splitter_.onEvent(e);
}

void MarkedRunRecorder::flush() {
  if (open_) open_->flush();
}

void MarkedRunRecorder::writerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every run is written
    Finished f = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    const RecordedRun done = finish(f);
    if (completed_) completed_(done);
    lock.lock();
    if (error_.empty()) error_ = done.error;
  }
}

RecordedRun MarkedRunRecorder::finish(Finished& f) {
  const std::string stem = fileStem(f.run.start.index, f.run.start.name);
  RecordedRun out{
      f.run, (fs::path(dir_) / (stem + ".kvrec")).string(), (fs::path(dir_) / (stem + ".json")).string(), {}};
  std::string error;
  if (!f.recorder->close(&error)) {
    out.error = error;
    return out;
  }
  // Never over a file this session did not write (one put there since it started).
  std::error_code ec;
  for (const auto& mine : {out.recording, out.summary})
    if (fs::exists(fs::symlink_status(mine, ec))) {
      out.error = mine + ": already exists (not written by this session); the run's recording stays at " +
                  AtomicFile::partialPath(out.recording);
      return out;
    }
  if (!AtomicFile::moveIntoPlace(AtomicFile::partialPath(out.recording), out.recording, &error)) {
    out.error = error;
    return out;
  }
  const RunSummary& s = f.run.summary;
  nlohmann::json summary = s.toJson();
  summary["run"] = runObject(f.run, stem + ".kvrec");
  nlohmann::json listed = summary["run"];
  listed["summary"] = stem + ".json";
  listed["requests"] = summary["requests"];
  listed["failure_rate"] = s.failure_rate;
  listed["e2e_p50_s"] = s.e2e_s.p50;
  listed["e2e_p99_s"] = s.e2e_s.p99;
  listed["ttft_p50_s"] = s.ttft_s.p50;
  listed["ttft_p99_s"] = s.ttft_s.p99;
  listed["diagnosis"] = nlohmann::json::array();
  for (const auto& finding : s.diagnosis) listed["diagnosis"].push_back(finding.mode);
  runs_.push_back(std::move(listed));
  // The summary before the list: a run runs.json names always has its summary in place.
  if (!AtomicFile::write(out.summary, summary.dump(2) + "\n", &error) ||
      !AtomicFile::write((fs::path(dir_) / "runs.json").string(), runs_.dump(2) + "\n", &error))
    out.error = error;
  return out;
}

bool MarkedRunRecorder::close(std::string* error) {
  if (writer_.joinable()) {
    // A stream that stopped without its RunFinished (a source torn down early) still ends its run.
    if (splitter_.openRun()) splitter_.onEvent(Event{last_seq_ + 1, last_time_, RunFinished{false}});
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    writer_.join();
  }
  if (!error_.empty() && error) *error = error_;
  return error_.empty();
}

}  // namespace kvscope
