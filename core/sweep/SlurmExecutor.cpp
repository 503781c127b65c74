#include "core/sweep/SlurmExecutor.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/io/AtomicFile.h"
#include "core/model/Error.h"

namespace kvscope {

namespace fs = std::filesystem;

namespace {

// For the script's shell line: 'text' with any ' closed, escaped and reopened.
std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// sbatch reads #SBATCH lines with its own parser, which takes double quotes around a value with spaces.
std::string directiveValue(const std::string& s) {
  return s.find_first_of(" \t") == std::string::npos ? s : "\"" + s + "\"";
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool allDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "4-6,9%2" (the inside of a pending range) -> 4, 5, 6, 9. Empty on anything else.
std::vector<std::size_t> expandRange(std::string text) {
  std::vector<std::size_t> out;
  text = text.substr(0, text.find('%'));  // the throttle, not a task
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const auto dash = part.find('-');
    const std::string a = part.substr(0, dash), b = dash == std::string::npos ? a : part.substr(dash + 1);
    if (!allDigits(a) || !allDigits(b)) return {};
    const std::size_t lo = std::stoul(a), hi = std::stoul(b);
    if (hi < lo || hi - lo > 1000000) return {};
    for (std::size_t t = lo; t <= hi; ++t) out.push_back(t);
  }
  return out;
}

}  // namespace

std::string SlurmExecutor::readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SlurmExecutor::SlurmExecutor(std::string dir, CommandRunner& commands) : dir_(std::move(dir)), commands_(commands) {}

std::string SlurmExecutor::slurmDir() const { return (fs::path(dir_) / "slurm").string(); }

std::string SlurmExecutor::errorPath(const std::string& stem) const {
  return (fs::path(slurmDir()) / (stem + ".error")).string();
}

std::vector<std::vector<std::size_t>> SlurmExecutor::shares(const std::vector<std::size_t>& runs, std::size_t tasks) {
  const std::size_t n = std::min(runs.size(), std::max<std::size_t>(1, tasks));
  std::vector<std::vector<std::size_t>> out(n);
  for (std::size_t k = 0; k < runs.size(); ++k) out[k % n].push_back(runs[k]);
  return out;
}

std::string SlurmExecutor::script(const SlurmOptions& o, const std::string& cli, const std::string& dir, int submission,
                                  std::size_t tasks, bool resume) {
  const std::string n = std::to_string(submission);
  const fs::path slurm = fs::path(dir) / "slurm";
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by `kvscope-cli sweep --executor slurm`: submission " << n << " of the sweep in this directory.\n"
    << "# Array task T runs the runs on line T+1 of submit-" << n << ".runs (indices into the grid of\n"
    << "# ../sweep.json) into the sweep directory, then writes the summary if every run is done. A task\n"
    << "# Slurm requeued (its node was lost: SLURM_RESTART_COUNT is set) skips the runs it had done.\n"
    << "#SBATCH --job-name=kvscope-sweep\n"
    << "#SBATCH --array=0-" << (tasks == 0 ? 0 : tasks - 1) << "\n"
    << "#SBATCH --cpus-per-task=" << std::max(1u, o.cpus_per_task) << "\n"
    << "#SBATCH --chdir=" << directiveValue(dir) << "\n"
    << "#SBATCH --output=" << directiveValue((slurm / ("submit-" + n + "-%a.log")).string()) << "\n"
    << "#SBATCH --open-mode=append\n";  // a requeued task's log keeps its first attempt
  if (!o.partition.empty()) s << "#SBATCH --partition=" << directiveValue(o.partition) << "\n";
  if (!o.time.empty()) s << "#SBATCH --time=" << directiveValue(o.time) << "\n";
  s << "exec " << shellQuote(cli) << " sweep --run-task " << shellQuote(dir) << " --submission " << n
    << " --task-index \"$SLURM_ARRAY_TASK_ID\" --jobs \"${SLURM_CPUS_PER_TASK:-" << std::max(1u, o.cpus_per_task)
    << "}\"" << (resume ? " --resume" : " ${SLURM_RESTART_COUNT:+--resume}") << "\n";
  return s.str();
}

std::optional<std::string> SlurmExecutor::parseJobId(const std::string& sbatch_out) {
  std::string line = trim(sbatch_out);
  if (const auto nl = line.rfind('\n'); nl != std::string::npos) line = trim(line.substr(nl + 1));  // after warnings
  line = line.substr(0, line.find(';'));  // "ID;cluster" on a multi-cluster setup
  if (!allDigits(line)) return std::nullopt;
  return line;
}

std::map<std::string, std::map<std::size_t, std::string>> SlurmExecutor::parseTaskStates(const std::string& out,
                                                                                         char separator) {
  std::map<std::string, std::map<std::size_t, std::string>> states;
  std::stringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    line = trim(line);
    const auto sep = line.find(separator);
    if (sep == std::string::npos) continue;
    const std::string id = trim(line.substr(0, sep));
    std::string state = trim(line.substr(sep + 1));
    state = state.substr(0, state.find_first_of(" \t|"));  // "CANCELLED by 0" -> "CANCELLED"
    const auto us = id.find('_');
    if (us == std::string::npos || state.empty()) continue;  // not an array task (".batch" steps have no '_' first)
    const std::string job = id.substr(0, us), task = id.substr(us + 1);
    if (!allDigits(job)) continue;
    if (allDigits(task)) {
      states[job][std::stoul(task)] = state;
    } else if (task.size() > 2 && task.front() == '[' && task.back() == ']') {
      for (std::size_t t : expandRange(task.substr(1, task.size() - 2))) states[job][t] = state;
    }
  }
  return states;
}

std::string SlurmExecutor::stateName(SlurmRunState state) {
  switch (state) {
    case SlurmRunState::Done:
      return "done";
    case SlurmRunState::Running:
      return "running";
    case SlurmRunState::Pending:
      return "pending";
    case SlurmRunState::Failed:
      return "failed";
    case SlurmRunState::Missing:
      return "missing";
  }
  return "missing";
}

std::vector<std::pair<int, std::string>> SlurmExecutor::jobs() const {
  std::vector<std::pair<int, std::string>> out;
  std::stringstream lines(readText((fs::path(slurmDir()) / "jobs").string()));
  int n = 0;
  std::string id;
  while (lines >> n >> id) out.emplace_back(n, id);
  return out;
}

SlurmSubmission SlurmExecutor::submit(const std::vector<std::size_t>& runs, const SlurmOptions& options,
                                      const std::string& cli, bool resume) {
  if (runs.empty()) throw InputError("nothing to submit: every run is done or queued");
  const fs::path slurm = slurmDir();
  std::error_code ec;
  fs::create_directories(slurm, ec);
  if (ec) throw InputError(slurm.string() + ": cannot create: " + ec.message());
  // The next number after every submission made so far (a failed one's script stays, for reading).
  int number = 1;
  for (const auto& entry : fs::directory_iterator(slurm, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("submit-", 0) != 0 || entry.path().extension() != ".sbatch") continue;
    const std::string digits = name.substr(7, name.size() - 7 - 7);
    if (allDigits(digits)) number = std::max(number, std::stoi(digits) + 1);
  }
  const auto parts = shares(runs, options.tasks == 0 ? kDefaultMaxTasks : options.tasks);
  std::string list;
  for (const auto& share : parts) {
    for (std::size_t k = 0; k < share.size(); ++k) list += (k ? " " : "") + std::to_string(share[k]);
    list += "\n";
  }
  const std::string n = std::to_string(number);
  const std::string runs_path = (slurm / ("submit-" + n + ".runs")).string();
  const std::string script_path = (slurm / ("submit-" + n + ".sbatch")).string();
  std::string error;
  if (!AtomicFile::write(runs_path, list, &error) ||
      !AtomicFile::write(script_path, script(options, cli, dir_, number, parts.size(), resume), &error))
    throw InputError(error);

  const CommandResult r = commands_.run({"sbatch", "--parsable", script_path});
  std::optional<std::string> id = r.started && r.exit_code == 0 ? parseJobId(r.out) : std::nullopt;
  if (!id) {
    fs::remove(runs_path, ec);  // no task will read it
    if (!r.started) throw InputError("sbatch not found: install slurm-client or use --executor local");
    throw InputError("sbatch " + script_path + " failed (exit " + std::to_string(r.exit_code) +
                     "): " + trim(r.err.empty() ? r.out : r.err));
  }
  const std::string jobs_path = (slurm / "jobs").string();
  if (!AtomicFile::write(jobs_path, readText(jobs_path) + n + " " + *id + "\n", &error))
    throw InputError(error + " (Slurm job " + *id + " was submitted)");
  return SlurmSubmission{number, *id, parts.size(), script_path};
}

std::vector<std::size_t> SlurmExecutor::taskRuns(int submission, std::size_t task) const {
  const fs::path path = fs::path(slurmDir()) / ("submit-" + std::to_string(submission) + ".runs");
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open (no such submission)");
  std::string line;
  for (std::size_t t = 0; std::getline(in, line); ++t) {
    if (t != task) continue;
    std::vector<std::size_t> runs;
    std::stringstream ss(line);
    std::size_t i = 0;
    while (ss >> i) runs.push_back(i);
    return runs;
  }
  throw InputError(path.string() + ": has no line for task " + std::to_string(task));
}

std::map<std::string, std::map<std::size_t, std::string>> SlurmExecutor::ask(const std::vector<std::string>& argv,
                                                                             char separator, bool quiet_failure) {
  const CommandResult r = commands_.run(argv);
  if (!r.started) {
    if (!quiet_failure) notes_.push_back(argv[0] + " not found: the states come from the files only");
    return {};
  }
  // squeue refuses a list of only finished jobs ("Invalid job id specified"): none is queued.
  if (r.exit_code != 0 && r.err.find("Invalid job id") == std::string::npos && !quiet_failure)
    notes_.push_back(argv[0] + " failed (" + trim(r.err) + "): the states come from the files only");
  return parseTaskStates(r.out, separator);
}

std::vector<SlurmRunStatus> SlurmExecutor::states(const std::vector<bool>& done,
                                                  const std::vector<std::string>& stems) {
  notes_.clear();
  std::vector<SlurmRunStatus> out(done.size());
  // The last submission holding each run is the one that decides (an earlier task may have been
  // cancelled and the run resubmitted).
  std::vector<std::optional<std::pair<std::string, std::size_t>>> task_of(done.size());
  std::string ids;
  for (const auto& [number, id] : jobs()) {
    ids += (ids.empty() ? "" : ",") + id;
    const fs::path path = fs::path(slurmDir()) / ("submit-" + std::to_string(number) + ".runs");
    std::ifstream in(path);
    std::string line;
    for (std::size_t t = 0; std::getline(in, line); ++t) {
      std::stringstream ss(line);
      std::size_t i = 0;
      while (ss >> i)
        if (i < done.size()) task_of[i] = std::make_pair(id, t);
    }
  }
  std::map<std::string, std::map<std::size_t, std::string>> queued, accounted;
  bool any_missing = false;
  for (std::size_t i = 0; i < done.size(); ++i) any_missing = any_missing || !done[i];
  if (!ids.empty() && any_missing) {
    queued = ask({"squeue", "-h", "-r", "-j", ids, "-o", "%i %T"}, ' ', false);
    // sacct works only where Slurm keeps accounting; without it the files say "missing" instead.
    accounted = ask({"sacct", "-n", "-P", "-X", "-j", ids, "-o", "JobID,State"}, '|', true);
  }
  auto lookup = [](const auto& table, const std::string& job, std::size_t task) -> std::string {
    const auto j = table.find(job);
    if (j == table.end()) return "";
    const auto t = j->second.find(task);
    return t == j->second.end() ? "" : t->second;
  };
  static const std::set<std::string> kActive{"RUNNING",   "COMPLETING",   "CONFIGURING", "PENDING",
                                             "REQUEUED",  "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING",
                                             "SUSPENDED", "STOPPED",      "SIGNALING",   "STAGE_OUT"};
  for (std::size_t i = 0; i < done.size(); ++i) {
    SlurmRunStatus& s = out[i];
    if (task_of[i]) s.task = task_of[i]->first + "_" + std::to_string(task_of[i]->second);
    if (done[i]) {
      s.state = SlurmRunState::Done;
      continue;
    }
    if (!task_of[i]) continue;  // never submitted: missing
    const std::string q = lookup(queued, task_of[i]->first, task_of[i]->second);
    std::error_code ec;
    if (kActive.count(q)) {
      // A running task runs its share a few at a time: the run is running once its recording's
      // temporary exists, else it waits in its task.
      const bool started = fs::exists(AtomicFile::partialPath((fs::path(dir_) / (stems[i] + ".kvrec")).string()), ec);
      s.state = q == "RUNNING" && started ? SlurmRunState::Running : SlurmRunState::Pending;
      s.detail = q == "RUNNING" && !started ? "waiting in its running task" : q;
      continue;
    }
    const fs::path error = errorPath(stems[i]);
    if (fs::is_regular_file(error, ec)) {
      s.state = SlurmRunState::Failed;
      std::string text = readText(error.string());
      s.detail = trim(text.substr(0, text.find('\n')));
      continue;
    }
    const std::string a = lookup(accounted, task_of[i]->first, task_of[i]->second);
    if (!a.empty() && a != "COMPLETED" && !kActive.count(a)) {
      s.state = SlurmRunState::Failed;
      s.detail = a;
    } else {
      s.detail = "its task ended without it";
    }
  }
  return out;
}

}  // namespace kvscope
