// kvscope-cli: the headless side of KVScope (simulate, scenarios, policies, report, export, serve, tail, sweep,
// compare, mark, import, logs, kv-events, calibrate).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "app/BuildInfo.h"
#include "app/cli/CliCommands.h"
#include "app/cli/SubcommandList.h"
#include "backend/recording/RecordingWorkload.h"
#include "core/io/TemporaryFiles.h"
#include "core/model/Error.h"
#include "core/run/HugePageHeap.h"

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
  kvscope::relaunchWithHugePageHeap(argv);            // the twin's chains on 2 MiB pages (HugePageHeap.h)
  kvscope::TemporaryFiles::removeOnInterrupt();       // no .partial left behind by a Ctrl+C
  kvscope::RecordingWorkload::registerTraceFormat();  // --trace run.kvrec: a recorded run's traffic
  CLI::App app{"kvscope-cli: KV-cache-aware routing on a simulated prefill/decode cluster", "kvscope-cli"};
  app.set_version_flag("--version", "kvscope-cli " + kvscope::versionLine());
  app.require_subcommand(1);
  kvscope::cli::SubcommandList commands(app);
  commands.add(kvscope::cli::addSimulate);
  commands.add(kvscope::cli::addScenarios);
  commands.add(kvscope::cli::addPolicies);
  commands.add(kvscope::cli::addReport);
  commands.add(kvscope::cli::addExport);
  commands.add(kvscope::cli::addServe);
  commands.add(kvscope::cli::addTail);
  commands.add(kvscope::cli::addSweep);
  commands.add(kvscope::cli::addCompare);
  commands.add(kvscope::cli::addMark);
  commands.add(kvscope::cli::addImport);
  commands.add(kvscope::cli::addLogs);
  commands.add(kvscope::cli::addKvEvents);
  commands.add(kvscope::cli::addScrape);
  commands.add(kvscope::cli::addCalibrate);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;  // --help and --version exit 0; every usage error exits 2
  }
  try {
    if (const auto code = commands.runParsed()) return checkStdout(*code);
  } catch (const kvscope::UsageError& e) {
    std::fprintf(stderr, "kvscope-cli: error: %s\n", kvscope::printableText(e.what()).c_str());
    return 2;
  } catch (const kvscope::InputError& e) {
    std::fprintf(stderr, "kvscope-cli: error: %s\n", kvscope::printableText(e.what()).c_str());
    return 1;
  } catch (const std::exception& e) {
    // never abort on bad input
    std::fprintf(stderr, "kvscope-cli: error: %s\n", kvscope::printableText(e.what()).c_str());
    return 1;
  }
  return 2;
}
