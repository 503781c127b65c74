// `kvscope-cli mark HOST:PORT --start NAME --param K=200 ...` / `--end [NAME]`: the run markers a
// lab's sweep script sends between its runs (Control.MarkRun), so a live session served by
// `kvscope-cli serve --live` splits into one recording and summary per run.
#include <cstdio>
#include <memory>

#include "app/cli/CliCommands.h"
#include "app/cli/ClientTlsOptions.h"
#include "backend/source/ServerClient.h"
#include "core/model/Error.h"

namespace kvscope::cli {
namespace {

struct MarkArgs {
  std::string address;
  std::string start;
  std::string end;
  bool end_given = false;
  std::vector<std::string> params;
  std::string token_file;
  ClientTls tls;
  std::string who = "kvscope-cli mark";
  double timeout_s = 10;
};

// "K=200" -> ("K", "200"); the value may itself contain '=' ("flags=--a=1").
std::pair<std::string, std::string> splitParam(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--param '" + text + "': expected NAME=VALUE (e.g. --param K=200)");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

Command addMark(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "mark", "Mark where a run of a live sweep starts or ends (each marked run gets its own recording and summary)");
  auto a = std::make_shared<MarkArgs>();
  sub->add_option("address", a->address, "HOST:PORT of `kvscope-cli serve --live` (or --router)")->required();
  auto* start = sub->add_option("--start", a->start, "Start a run with this name (ends a run still open first)");
  auto* end =
      sub->add_option("--end", a->end, "End the open run (give its name to check it is the one open)")->expected(0, 1);
  start->excludes(end);
  sub->add_option("--param", a->params, "A parameter of the run, NAME=VALUE (repeatable; with --start)")->needs(start);
  sub->add_option("--token-file", a->token_file, "Send 'authorization: Bearer <token from this file>'");
  addClientTlsOptions(*sub, a->tls);
  sub->add_option("--who", a->who, "Who marks, as the telemetry stream shows it")->capture_default_str();
  sub->add_option("--timeout", a->timeout_s, "Seconds to wait for the server")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  // Neither is a usage error (exit 2, with the usage), caught while parsing.
  sub->parse_complete_callback([start, end] {
    if (start->count() == 0 && end->count() == 0)
      throw CLI::ValidationError("mark", "give --start NAME (with --param NAME=VALUE ...) or --end [NAME]");
  });
  return [a, start] {
    RunMarkRequest request;
    if (start->count() > 0) {
      request.action = RunMarkAction::Start;
      request.name = a->start;
      for (const auto& text : a->params) request.parameters.push_back(splitParam(text));
    } else {
      request.action = RunMarkAction::End;
      request.name = a->end;
    }
    request.who = a->who;
    const ServerClient client(a->address, a->token_file, a->tls);
    for (const RunMarked& m : client.markRun(request, a->timeout_s))
      std::printf("run %u '%s' %s\n", m.index, m.name.c_str(), m.action == RunMarkAction::Start ? "started" : "ended");
    return 0;
  };
}

}  // namespace kvscope::cli
