// kvscope-cli: the headless side of KVScope (simulate, scenarios, policies, report, export, serve, tail, sweep,
// compare, mark, import, logs, calibrate).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "BuildInfo.h"
#include "cli/CliCommands.h"
#include "model/Error.h"

namespace {
// What a command printed must have reached its reader: a full disk or a closed pipe behind stdout
// fails the command (exit 1), as a failed write to a named file does.
int checkStdout(int code) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  std::fprintf(stderr, "kvscope-cli: error: cannot write to standard output: %s\n", std::strerror(errno));
  return code == 0 ? 1 : code;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kvscope-cli: KV-cache-aware routing on a simulated prefill/decode cluster", "kvscope-cli"};
  app.set_version_flag("--version", "kvscope-cli " + kvscope::versionLine());
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, kvscope::cli::Command>> commands;
  auto add = [&](auto adder) {
    const std::size_t before = app.get_subcommands({}).size();
    auto cmd = adder(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(cmd));
  };
  add(kvscope::cli::addSimulate);
  add(kvscope::cli::addScenarios);
  add(kvscope::cli::addPolicies);
  add(kvscope::cli::addReport);
  add(kvscope::cli::addExport);
  add(kvscope::cli::addServe);
  add(kvscope::cli::addTail);
  add(kvscope::cli::addSweep);
  add(kvscope::cli::addCompare);
  add(kvscope::cli::addMark);
  add(kvscope::cli::addImport);
  add(kvscope::cli::addLogs);
  add(kvscope::cli::addCalibrate);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // --help and --version exit 0; every usage error exits 2
  }
  try {
    for (auto& [sub, run] : commands)
      if (sub->parsed()) return checkStdout(run());
  } catch (const kvscope::UsageError& e) {
    std::fprintf(stderr, "kvscope-cli: error: %s\n", e.what());
    return 2;
  } catch (const kvscope::InputError& e) {
    std::fprintf(stderr, "kvscope-cli: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvscope-cli: error: %s\n", e.what());  // never abort on bad input
    return 1;
  }
  return 2;
}
