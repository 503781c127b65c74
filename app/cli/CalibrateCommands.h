#pragma once
// The subcommands under `kvscope-cli calibrate`. Each registers itself on the `calibrate`
// group and returns what runs it; CalibrateCommand.cpp's addCalibrate lists them and runs the one
// that parsed. One function per subcommand, each in its own file where it is large, so that adding
// one is a line here and a line in that list.
#include "app/cli/CliCommands.h"

namespace kvscope::cli {

// `calibrate profile LOG... [--metrics W=SCRAPES]... [--base PROFILE] -o profile.json`
Command addCalibrateProfile(CLI::App& calibrate);
// `calibrate model CONFIG.json --gpu h200 --engine sglang --decode-fraction F -o profile.json`
Command addCalibrateModel(CLI::App& calibrate);
// `calibrate fit --scenario S --target T --fit NAME=LO:HI... --seeds N -o S.calibrated.json`
Command addCalibrateFit(CLI::App& calibrate);
// `calibrate check --scenario S.calibrated.json --target T [--seeds N]`
Command addCalibrateCheck(CLI::App& calibrate);

}  // namespace kvscope::cli
