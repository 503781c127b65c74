// `kvscope-cli tail ADDR:PORT`: subscribe to a served run's telemetry and print each event as one
// JSON line (a quick live check from a terminal or a script).
#include <cstdio>
#include <memory>
#include <set>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "backend/convert/EventConvert.h"
#include "backend/service/BearerToken.h"
#include "core/events/EventJson.h"
#include "core/events/EventLimits.h"
#include "core/model/Error.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

namespace kvscope::cli {

Command addTail(CLI::App& app) {
  auto* sub = app.add_subcommand("tail", "Print a served run's events as JSON lines");
  auto address = std::make_shared<std::string>();
  auto from = std::make_shared<std::uint64_t>(0);
  auto kinds = std::make_shared<std::vector<std::string>>();
  auto limit = std::make_shared<std::uint64_t>(0);
  auto token_file = std::make_shared<std::string>();
  sub->add_option("address", *address, "ADDR:PORT of `kvscope-cli serve`")->required();
  sub->add_option("--from-seq", *from, "First sequence number (0: from the start, as far as the server holds)");
  sub->add_option("--kinds", *kinds, "Only these event kinds (e.g. eviction crash link)");
  sub->add_option("--limit", *limit, "Stop after this many events (0: until the stream ends)");
  sub->add_option("--token-file", *token_file,
                  "Send 'authorization: Bearer <token from this file>' (serve --token-file)");
  return [address, from, kinds, limit, token_file] {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(static_cast<int>(kClientReceiveLimitBytes));  // above any event (EventLimits.h)
    auto channel = grpc::CreateCustomChannel(*address, grpc::InsecureChannelCredentials(), args);
    auto stub = v1::Telemetry::NewStub(channel);
    grpc::ClientContext context;
    if (!token_file->empty()) {
      std::string why;
      auto token = BearerToken::fromFile(*token_file, &why);
      if (!token) throw InputError(why);
      context.AddMetadata("authorization", token->authorization());
    }
    v1::SubscribeRequest request;
    request.set_from_seq(*from);
    for (const auto& k : *kinds) request.add_kinds(k);
    auto reader = stub->Subscribe(&context, request);
    v1::TelemetryMessage message;
    Event event;
    std::string why;
    std::uint64_t n = 0;
    while (reader->Read(&message)) {
      if (message.has_gap()) {
        std::printf("{\"kind\":\"gap\",\"first_seq\":%llu,\"last_seq\":%llu}\n",
                    static_cast<unsigned long long>(message.gap().first_seq()),
                    static_cast<unsigned long long>(message.gap().last_seq()));
      } else if (fromProto(message.event(), &event, &why)) {
        std::printf("%s\n", eventToJson(event).dump().c_str());
      } else {
        std::fprintf(stderr, "kvscope-cli: warning: an event did not decode: %s\n", why.c_str());
      }
      std::fflush(stdout);
      if (*limit > 0 && ++n >= *limit) {
        context.TryCancel();
        break;
      }
    }
    const grpc::Status status = reader->Finish();
    if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED)
      throw InputError(*address + ": " + status.error_message() + " (gRPC code " + std::to_string(status.error_code()) +
                       ")");
    return 0;
  };
}

}  // namespace kvscope::cli
