#pragma once
// The subcommands of kvscope-cli. Each registers its options on the CLI11 app and returns a
// callback that runs it. Exit codes: 0 ok, 1 bad input (a message names file, line and field),
// 2 usage error.
#include <functional>

#include <CLI/CLI.hpp>

namespace kvscope::cli {

using Command = std::function<int()>;

Command addSimulate(CLI::App& app);
Command addScenarios(CLI::App& app);
Command addPolicies(CLI::App& app);
Command addReport(CLI::App& app);
Command addExport(CLI::App& app);
Command addServe(CLI::App& app);
Command addTail(CLI::App& app);
Command addSweep(CLI::App& app);
Command addCompare(CLI::App& app);
Command addMark(CLI::App& app);
Command addImport(CLI::App& app);
Command addLogs(CLI::App& app);
Command addKvEvents(CLI::App& app);
Command addScrape(CLI::App& app);
Command addCalibrate(CLI::App& app);  // the group; its subcommands: cli/CalibrateCommands.h

}  // namespace kvscope::cli
