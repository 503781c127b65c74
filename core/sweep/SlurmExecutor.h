#pragma once
// A sweep on Slurm: the runs still missing are split into the tasks of one job array, submitted with
// sbatch; each task runs its share into the sweep directory (on storage every node sees) with the same
// per-run code as a local sweep (`kvscope-cli sweep --run-task`), so a run is done exactly when its
// files are there, whoever ran it. Everything about the submissions is kept beside the runs, in
// DIR/slurm/, to be read by a person as well as by `--status` and `--resume`:
//
//   submit-N.sbatch   the batch script of submission N (N = 1, 2, ... : the first submit, resumes)
//   submit-N.runs     line T: the run indices task T of that array runs (point-major, as SweepRunner)
//   submit-N-T.log    task T's output
//   jobs              "N JOBID" per submission
//   STEM.error        why a run failed (written by its task)
//
// The class writes those files and asks Slurm through a CommandRunner (core/ starts no process);
// parsing sbatch's, squeue's and sacct's answers is static, to be tested without Slurm.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/run/CommandRunner.h"

namespace kvscope {

struct SlurmOptions {
  std::string partition;       // empty: the cluster's default
  std::string time;            // --time of every task; empty: the partition's default
  unsigned cpus_per_task = 1;  // also the runs a task runs at once
  unsigned tasks = 0;          // array tasks; 0 = one per run, at most kDefaultMaxTasks
};

enum class SlurmRunState { Done, Running, Pending, Failed, Missing };

struct SlurmRunStatus {
  SlurmRunState state = SlurmRunState::Missing;
  std::string task;    // "JOBID_T" of the last submission that holds the run; empty if never submitted
  std::string detail;  // the Slurm state or the error, when there is one
};

struct SlurmSubmission {
  int number = 0;
  std::string job_id;
  std::size_t tasks = 0;
  std::string script_path;
};

class SlurmExecutor {
 public:
  static constexpr std::size_t kDefaultMaxTasks = 100;

  // A file of the sweep directory, whole; empty when it is missing or unreadable (a first submission).
  static std::string readText(const std::string& path);

  // `dir` is the sweep directory (absolute: tasks run elsewhere).
  SlurmExecutor(std::string dir, CommandRunner& commands);

  // Writes submit-N.runs and submit-N.sbatch, runs `sbatch --parsable`, records the job id. `cli`
  // is the kvscope-cli the tasks run (an absolute path every node can reach). With `resume` the
  // tasks skip a run found done; without, they run all of it, as a local sweep without --resume
  // does, except when Slurm requeued the task (its node was lost): then it skips what it had done. Throws InputError
  // ("sbatch not found: ...", sbatch's own message) and leaves no .runs file of a failed submission.
  SlurmSubmission submit(const std::vector<std::size_t>& runs, const SlurmOptions& options, const std::string& cli,
                         bool resume = false);

  // The runs task `task` of submission `submission` runs. Throws InputError when that file or line
  // is missing.
  std::vector<std::size_t> taskRuns(int submission, std::size_t task) const;

  // Each run's state: `done` from the run files (SweepRunner), the rest from squeue (running or
  // pending), the task's error file, sacct if Slurm keeps accounting (failed, cancelled, timed out),
  // else "missing". `stems` name the runs' files. Problems asking Slurm go to notes(), not an error:
  // the files alone still say what is done.
  std::vector<SlurmRunStatus> states(const std::vector<bool>& done, const std::vector<std::string>& stems);
  const std::vector<std::string>& notes() const { return notes_; }

  // Job ids of every submission, oldest first, with their submission numbers.
  std::vector<std::pair<int, std::string>> jobs() const;
  std::string slurmDir() const;
  std::string errorPath(const std::string& stem) const;

  // Deals the runs out to `tasks` shares, round robin (neighbouring runs are often the same point,
  // about as long, so each share gets a mix). No empty share: fewer shares when fewer runs.
  static std::vector<std::vector<std::size_t>> shares(const std::vector<std::size_t>& runs, std::size_t tasks);
  static std::string script(const SlurmOptions& options, const std::string& cli, const std::string& dir, int submission,
                            std::size_t tasks, bool resume = false);
  // "12345" or "12345;cluster" (sbatch --parsable): the job id, nullopt when it is not one.
  static std::optional<std::string> parseJobId(const std::string& sbatch_out);
  // Array task states from `squeue -h -r -o "%i %T"` (separator ' ') or `sacct -n -P -X -o
  // JobID,State` (separator '|'): job id -> task index -> state ("RUNNING", "CANCELLED"; sacct's
  // "CANCELLED by 0" keeps its first word). Lines of other jobs' shapes are skipped; a pending range
  // "123_[4-6,9%2]" gives each of its tasks.
  static std::map<std::string, std::map<std::size_t, std::string>> parseTaskStates(const std::string& out,
                                                                                   char separator);
  static std::string stateName(SlurmRunState state);

 private:
  std::map<std::string, std::map<std::size_t, std::string>> ask(const std::vector<std::string>& argv, char separator,
                                                                bool quiet_failure);

  std::string dir_;
  CommandRunner& commands_;
  std::vector<std::string> notes_;
};

}  // namespace kvscope
