// `kvscope-cli compare A.kvrec B.kvrec ...`: the sweep's tables from existing recordings (simulated
// or from a real cluster), each summarised as `report` does.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "backend/recording/RecordingPlayer.h"
#include "core/metrics/RunAnalysis.h"
#include "core/model/Error.h"
#include "core/sweep/RecordedRunSet.h"
#include "core/sweep/SweepAnalysis.h"
#include "core/sweep/SweepReport.h"

namespace kvscope::cli {

namespace {
struct CompareArgs {
  std::vector<std::string> recordings;
  double level = 0.05;
  std::string format = "md";
  std::string out;
};
}  // namespace

Command addCompare(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  auto* sub = app.add_subcommand(
      "compare",
      "The sweep's tables from recordings (.kvrec): runs with the same scenario, policy and knobs form a point "
      "(named by what differs), runs pair up by seed when every point has the same seeds (else unpaired: no test; "
      "paired: the exact sign-flip test, its n and smallest possible p, \"needs >= k seeds\" when n cannot reach "
      "the level); "
      "the first recording's point is the baseline. Each recording is summarised as `report` does.");
  sub->add_option("recordings", a->recordings, "The .kvrec files (at least two)")->required()->expected(2, 100000);
  sub->add_option("--level", a->level, "Significance level of the verdicts")
      ->check(CLI::Range(1e-9, 0.999999).description("in (0, 1)"))
      ->capture_default_str();
  sub->add_option("--format", a->format, "What to print: md, csv or json")
      ->check(CLI::IsMember({"md", "csv", "json"}))
      ->capture_default_str();
  sub->add_option("--out,-o", a->out, "Also write DIR/summary.md, summary.csv and summary.json");
  return [a] {
    std::vector<RecordedRun> runs;
    for (const auto& path : a->recordings) {
      RecordingPlayer player(path);  // throws InputError naming the file
      RunAnalysis analysis;
      player.play(analysis);
      for (const auto& p : player.damage().problems) std::fprintf(stderr, "kvscope-cli: warning: %s\n", p.c_str());
      runs.push_back(RecordedRun{path, player.run(), analysis.summary()});
    }
    const SweepData data = RecordedRunSet::arrange(runs, a->level);
    const SweepAnalysis analysis = SweepAnalysis::of(data);
    const SweepReport report(data, analysis);
    if (!a->out.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(a->out, ec);
      if (ec) throw InputError("--out " + a->out + ": " + ec.message());
      std::string error;
      if (!report.writeAll(a->out, &error)) throw InputError(error);
    }
    if (a->format == "json")
      std::printf("%s\n", report.json().dump(2).c_str());
    else if (a->format == "csv")
      std::fputs(report.csv().c_str(), stdout);
    else
      std::fputs(report.markdown().c_str(), stdout);
    return 0;
  };
}

}  // namespace kvscope::cli
