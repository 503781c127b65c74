#pragma once
// The real CommandRunner of kvscope-cli: starts the program (found on PATH) with posix_spawnp and
// collects its stdout and stderr. Used for Slurm's sbatch, squeue and sacct, which answer quickly.
#include "core/run/CommandRunner.h"

namespace kvscope::cli {

class SystemCommandRunner : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv) override;
};

}  // namespace kvscope::cli
