#pragma once
// Runs an external program and returns what it printed. core/ never starts processes itself (it is
// also linked into the console and the tests): the code that needs a program's answer (the Slurm
// executor asks sbatch and squeue) takes this interface, the CLI passes the real one and the tests a
// fake that answers as the program would.
#include <string>
#include <vector>

namespace kvscope {

struct CommandResult {
  bool started = false;  // false: the program was not found or could not be run
  int exit_code = -1;    // its exit status; 128 + N when killed by signal N
  std::string out, err;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // argv[0] is looked up on PATH.
  virtual CommandResult run(const std::vector<std::string>& argv) = 0;
};

}  // namespace kvscope
