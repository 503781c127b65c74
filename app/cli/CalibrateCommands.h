#pragma once
// The subcommands of `kvscope-cli calibrate` (registered on the group by CalibrateCommand.cpp).
#include "cli/CliCommands.h"

namespace kvscope::cli {

Command addCalibrateFit(CLI::App& calibrate);
Command addCalibrateCheck(CLI::App& calibrate);

}  // namespace kvscope::cli
