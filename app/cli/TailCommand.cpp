// `kvscope-cli tail ADDR:PORT`: subscribe to a served run's telemetry and print each event as one
// JSON line (a quick live check from a terminal or a script).
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "app/cli/ClientTlsOptions.h"
#include "backend/source/ServerClient.h"
#include "core/events/EventJson.h"

namespace kvscope::cli {

Command addTail(CLI::App& app) {
  auto* sub = app.add_subcommand("tail", "Print a served run's events as JSON lines");
  auto address = std::make_shared<std::string>();
  auto from = std::make_shared<std::uint64_t>(0);
  auto kinds = std::make_shared<std::vector<std::string>>();
  auto limit = std::make_shared<std::uint64_t>(0);
  auto token_file = std::make_shared<std::string>();
  auto tls = std::make_shared<ClientTls>();
  sub->add_option("address", *address, "ADDR:PORT of `kvscope-cli serve`")->required();
  sub->add_option("--from-seq", *from, "First sequence number (0: from the start, as far as the server holds)");
  sub->add_option("--kinds", *kinds, "Only these event kinds (e.g. eviction crash link)");
  sub->add_option("--limit", *limit, "Stop after this many events (0: until the stream ends)");
  sub->add_option("--token-file", *token_file,
                  "Send 'authorization: Bearer <token from this file>' (serve --token-file)");
  addClientTlsOptions(*sub, *tls);
  return [address, from, kinds, limit, token_file, tls] {
    std::uint64_t n = 0;
    // After each line: stop at --limit.
    auto printed = [&] {
      std::fflush(stdout);
      return *limit == 0 || ++n < *limit;
    };
    ServerClient::StreamCallbacks on;
    on.event = [&](const Event& event) {
      std::printf("%s\n", eventToJson(event).dump().c_str());
      return printed();
    };
    on.gap = [&](std::uint64_t first, std::uint64_t last) {
      std::printf("{\"kind\":\"gap\",\"first_seq\":%llu,\"last_seq\":%llu}\n", static_cast<unsigned long long>(first),
                  static_cast<unsigned long long>(last));
      return printed();
    };
    on.undecodable = [](const std::string& why) {
      std::fprintf(stderr, "kvscope-cli: warning: an event did not decode: %s\n", why.c_str());
    };
    ServerClient(*address, *token_file, *tls).subscribe(*from, *kinds, on);
    return 0;
  };
}

}  // namespace kvscope::cli
