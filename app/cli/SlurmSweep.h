#pragma once
// `kvscope-cli sweep` on Slurm: the submitting side (--executor slurm, with or
// without --resume), the array task each Slurm task runs (the hidden --run-task), and --status. The
// runs, their files and the summary are the local sweep's (SweepRunner, SweepReport); what is Slurm's
// (the script, the job ids, squeue) is SlurmExecutor's. The spec travels as DIR/sweep.json.
#include <string>

#include "core/sweep/SlurmExecutor.h"
#include "core/sweep/SweepSpec.h"

namespace kvscope::cli {

class SlurmSweep {
 public:
  // Writes DIR/sweep.json and submits the runs (with `resume`: only those neither done nor queued)
  // as one job array. When none is left, writes the summary instead. Exit code.
  static int submit(const SweepSpec& spec, const std::string& dir, bool resume, const SlurmOptions& options);
  // One array task: runs its share of submission `submission`, records a failed run's error beside
  // it, then writes the summary if every run of the sweep is done. Exit code (130: cancelled).
  static int runTask(const std::string& dir, int submission, std::size_t task, unsigned jobs, bool resume);
  // Counts and each run's state, from the files and squeue/sacct. Exit code.
  static int status(const std::string& dir);
};

}  // namespace kvscope::cli
