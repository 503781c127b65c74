// `kvscope-cli calibrate`: the group of commands that fit the simulated cluster to measured results
// (docs/calibration.md). It runs the one subcommand given.
#include <memory>
#include <utility>
#include <vector>

#include "cli/CalibrateCommands.h"

namespace kvscope::cli {

Command addCalibrate(CLI::App& app) {
  auto* calibrate = app.add_subcommand(
      "calibrate", "Fit the simulated cluster to measured results, and check its predictions (docs/calibration.md)");
  calibrate->require_subcommand(1);
  auto commands = std::make_shared<std::vector<std::pair<CLI::App*, Command>>>();
  auto add = [&](Command (*adder)(CLI::App&)) {
    const std::size_t before = calibrate->get_subcommands({}).size();
    Command cmd = adder(*calibrate);
    commands->emplace_back(calibrate->get_subcommands({})[before], std::move(cmd));
  };
  add(addCalibrateFit);
  add(addCalibrateCheck);
  return [commands] {
    for (auto& [sub, run] : *commands)
      if (sub->parsed()) return run();
    return 2;
  };
}

}  // namespace kvscope::cli
