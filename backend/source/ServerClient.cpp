#include "backend/source/ServerClient.h"

#include <chrono>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "backend/convert/EventConvert.h"
#include "backend/service/BearerToken.h"
#include "core/events/EventLimits.h"
#include "core/model/Error.h"
#include "kvscope/v1/control.grpc.pb.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

namespace kvscope {

namespace {

InputError callFailed(const std::string& address, const grpc::Status& status) {
  return InputError(address + ": " + status.error_message() + " (gRPC code " + std::to_string(status.error_code()) +
                    ")");
}

}  // namespace

ServerClient::ServerClient(std::string address, const std::string& token_file, const ClientTls& tls)
    : address_(std::move(address)), credentials_(channelCredentials(tls)) {
  if (token_file.empty()) return;
  std::string why;
  auto token = BearerToken::fromFile(token_file, &why);
  if (!token) throw InputError(why);
  authorization_ = token->authorization();
}

std::vector<RunMarked> ServerClient::markRun(const RunMarkRequest& mark, double timeout_s) const {
  v1::MarkRunRequest request;
  request.set_action(mark.action == RunMarkAction::Start ? v1::RUN_MARK_ACTION_START : v1::RUN_MARK_ACTION_END);
  request.set_name(mark.name);
  for (const auto& [name, value] : mark.parameters) {
    auto* p = request.add_parameters();
    p->set_name(name);
    p->set_value(value);
  }
  request.set_who(mark.who);

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)));
  if (!authorization_.empty()) context.AddMetadata("authorization", authorization_);
  auto stub = v1::Control::NewStub(grpc::CreateChannel(address_, credentials_));
  v1::MarkRunResponse response;
  const grpc::Status status = stub->MarkRun(&context, request, &response);
  if (!status.ok()) throw callFailed(address_, status);
  std::vector<RunMarked> applied;
  for (const auto& m : response.applied()) {
    RunMarked r;
    r.action = m.action() == v1::RUN_MARK_ACTION_START ? RunMarkAction::Start : RunMarkAction::End;
    r.index = m.index();
    r.name = m.name();
    applied.push_back(std::move(r));
  }
  return applied;
}

void ServerClient::subscribe(std::uint64_t from_seq, const std::vector<std::string>& kinds,
                             const StreamCallbacks& on) const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(kClientReceiveLimitBytes));  // above any event (EventLimits.h)
  auto stub = v1::Telemetry::NewStub(grpc::CreateCustomChannel(address_, credentials_, args));
  grpc::ClientContext context;
  if (!authorization_.empty()) context.AddMetadata("authorization", authorization_);
  v1::SubscribeRequest request;
  request.set_from_seq(from_seq);
  for (const auto& k : kinds) request.add_kinds(k);
  auto reader = stub->Subscribe(&context, request);
  v1::TelemetryMessage message;
  Event event;
  std::string why;
  while (reader->Read(&message)) {
    bool more = true;
    if (message.has_gap())
      more = on.gap(message.gap().first_seq(), message.gap().last_seq());
    else if (fromProto(message.event(), &event, &why))
      more = on.event(event);
    else
      on.undecodable(why);
    if (!more) {
      context.TryCancel();
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) throw callFailed(address_, status);
}

}  // namespace kvscope
