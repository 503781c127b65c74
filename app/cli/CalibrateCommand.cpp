// `kvscope-cli calibrate` (docs/calibration.md): the group, which runs whichever subcommand
// parsed, and `calibrate profile` (section 1: a hardware profile fitted from the workers' logs); `fit`
// and `check` are in their own files. The fitting
// itself is Qt- and CLI-free in core/calibration (ProfileCalibration); here only options, files and
// what is printed.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "app/cli/CalibrateCommands.h"
#include "app/cli/SubcommandList.h"
#include "core/calibration/ProfileCalibration.h"
#include "core/io/AtomicFile.h"
#include "core/model/Error.h"

namespace kvscope::cli {

Command addCalibrate(CLI::App& app) {
  auto* group = app.add_subcommand("calibrate",
                                   "Fit the simulated cluster to a real one (profile: from its logs; fit: to measured "
                                   "results) and check its predictions");
  group->require_subcommand(1);
  auto commands = std::make_shared<SubcommandList>(*group);
  commands->add(addCalibrateProfile);
  commands->add(addCalibrateModel);
  commands->add(addCalibrateFit);
  commands->add(addCalibrateCheck);
  return [commands]() -> int {
    if (const auto code = commands->runParsed()) return *code;
    throw UsageError("calibrate: a subcommand is required");
  };
}

namespace {

struct ProfileArgs {
  std::vector<std::string> logs;
  std::vector<std::string> metrics;
  std::string base = "h200";
  std::string name;
  std::string out;
};

std::pair<std::string, std::string> workerAndPath(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw UsageError("--metrics '" + spec +
                     "': expected WORKER=SCRAPES (e.g. P0=p0.prom, a file of saved /metrics answers)");
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

}  // namespace

Command addCalibrateProfile(CLI::App& calibrate) {
  auto* sub = calibrate.add_subcommand(
      "profile", "Fit a hardware profile's constants from SGLang scheduler logs (and saved /metrics scrapes)");
  sub->footer(
      "Decode iteration time (base, per running request, per context token) is fitted by least squares to\n"
      "#running-req / gen throughput of `Decode batch` lines; prefill throughput and per-batch overhead to the\n"
      "`Prefill batch` lines (their input throughput, or the time between lines); the P->D link bandwidth to\n"
      "kv_transfer_speed_gb_s in saved scrapes. Constants the data do not pin down keep --base's value, with a\n"
      "warning. The output is a profile (as resources/profiles/*.json) plus a \"calibration\" object.\n"
      "  kvscope-cli calibrate profile d0.log d1.log p0.log --metrics P0=p0.prom --base h200 -o lab.json");
  auto a = std::make_shared<ProfileArgs>();
  sub->add_option("logs", a->logs, "SGLang scheduler logs (decode and prefill workers)")->required();
  sub->add_option(
      "--metrics", a->metrics,
      "A worker's saved /metrics scrapes, WORKER=SCRAPES: each answer after a line with its time; repeatable");
  sub->add_option("--base", a->base,
                  "The profile whose constants are kept where the logs say nothing (a bundled name or a .json file)")
      ->capture_default_str();
  sub->add_option("--name", a->name, "The written profile's name (default: the output file's name)");
  sub->add_option("-o,--output", a->out, "The profile to write (.json; written whole or not at all)")->required();
  return [a]() -> int {
    CalibrationInputs in;
    in.logs = a->logs;
    for (const auto& spec : a->metrics) in.metrics.push_back(workerAndPath(spec));
    in.base = a->base;
    in.name = a->name.empty() ? std::filesystem::path(a->out).stem().string() : a->name;
    std::string error;
    if (!AtomicFile::target(a->out, &error)) throw InputError(error);
    for (const auto& log : in.logs)
      if (!std::filesystem::is_regular_file(log))
        throw InputError(
            formatInputError(log, 0, "", std::filesystem::exists(log) ? "not a regular file" : "no such log file"));
    for (const auto& [worker, path] : in.metrics)
      if (!std::filesystem::is_regular_file(path))
        throw InputError(formatInputError(path, 0, "", "no such scrape file (--metrics " + worker + "=" + path + ")"));
    const CalibrationResult r = ProfileCalibration::run(in);
    const std::string text = ProfileCalibration::toJson(r, in).dump(2) + "\n";
    if (!AtomicFile::write(a->out, text, &error)) throw InputError(error);
    std::printf("%s", ProfileCalibration::table(r).c_str());
    std::printf(
        "\n%ld log lines: %ld Decode batch (%ld used, %ld outliers, %ld with 0 running, %ld with 0 throughput, "
        "%ld speculative), %ld Prefill batch (%ld gaps, %ld saturated, method %s)\n",
        r.log_lines, r.decode.lines, r.decode.used - r.decode_outliers, r.decode_outliers, r.decode.no_running,
        r.decode.no_throughput, r.decode.speculative, r.prefill.lines, r.prefill.pairs, r.prefill.saturated_pairs,
        toString(r.prefill_method));
    std::printf("wrote %s (base: %s)\n", a->out.c_str(), in.base.c_str());
    return 0;
  };
}

}  // namespace kvscope::cli
