// `kvscope-cli report` and `kvscope-cli export`: what a recording says, computed from the file alone.
#include <chrono>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "backend/export/EventExporter.h"
#include "backend/recording/RecordingPlayer.h"
#include "core/metrics/RunAnalysis.h"
#include "core/model/Error.h"

namespace kvscope::cli {

namespace {
// Damage is reported, never fatal: a recording cut short by a crash still has a story to tell.
void warnAbout(const RecordingPlayer& player) {
  const auto d = player.damage();
  for (const auto& p : d.problems) std::fprintf(stderr, "kvscope-cli: warning: %s\n", p.c_str());
}
}  // namespace

Command addReport(CLI::App& app) {
  auto* sub = app.add_subcommand("report", "Summarise a recording (.kvrec): the same summary `simulate` prints");
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  sub->add_option("recording", *path, "The .kvrec file")->required();
  sub->add_option("--format", *format, "Output: table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return [path, format] {
    const auto start = std::chrono::steady_clock::now();
    RecordingPlayer player(*path);
    RunAnalysis analysis;
    player.play(analysis);
    warnAbout(player);
    RunSummary summary = analysis.summary();
    summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (*format == "json")
      std::printf("%s\n", summary.toJson().dump(2).c_str());
    else
      std::fputs(summary.toTable().c_str(), stdout);
    return 0;
  };
}

Command addExport(CLI::App& app) {
  auto* sub = app.add_subcommand("export", "Convert a recording to CSV, JSON lines or Chrome trace JSON (Perfetto)");
  sub->footer(
      "The notes kept beside the recording (RUN.kvrec.notes.json) go in at their times: rows and lines of "
      "kind \"note\", global instant events named \"note: TEXT\" in a Chrome trace.");
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  sub->add_option("recording", *path, "The .kvrec file")->required();
  sub->add_option("--format", *format, "csv, jsonl or chrome-trace")
      ->required()
      ->check(CLI::IsMember({"csv", "jsonl", "chrome-trace"}));
  sub->add_option("-o,--output", *out, "The file to write (a regular file; - for standard output)")->required();
  return [path, format, out] {
    EventExporter::Format f;
    EventExporter::parseFormat(*format, f);
    RecordingPlayer player(*path);
    auto exporter = EventExporter::create(f, *out);
    const RunNotes notes = RunNotes::loadFor(*path);  // RUN.kvrec.notes.json, when there is one
    exporter->setNotes(notes.notes());
    const auto n = player.play(*exporter);
    warnAbout(player);
    std::string error;
    if (!exporter->finish(&error)) throw InputError(error);
    std::fprintf(stderr, "kvscope-cli: wrote %llu events%s to %s\n", static_cast<unsigned long long>(n),
                 notes.empty() ? "" : (" and " + std::to_string(notes.notes().size()) + " notes").c_str(),
                 out->c_str());
    return 0;
  };
}

}  // namespace kvscope::cli
