#include "backend/service/RouterService.h"

#include <mutex>

#include "backend/convert/EventConvert.h"
#include "backend/service/CallAuthorization.h"
#include "core/events/EventLimits.h"
#include "core/router/TokenBlockHash.h"

namespace kvscope {

using grpc::Status;
using grpc::StatusCode;

namespace {

grpc::ServerUnaryReactor* finish(grpc::ServerUnaryReactor* reactor, Status status) {
  reactor->Finish(std::move(status));
  return reactor;
}

// One Report call: reads observations one at a time and applies each before asking for the next,
// so they are applied in order and a flood only ever holds one message.
class ReportReactor final : public grpc::ServerReadReactor<v1::Observation> {
 public:
  ReportReactor(RouterService& service, v1::ReportSummary* summary) : service_(service), summary_(summary) {
    StartRead(&observation_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {  // the client closed its side: all applied, and on their way to the recording
      service_.flush();
      return Finish(Status::OK);
    }
    std::string error;
    if (!service_.apply(observation_, &error))
      return Finish(
          Status(StatusCode::INVALID_ARGUMENT, "observation " + std::to_string(summary_->applied()) + ": " + error));
    summary_->set_applied(summary_->applied() + 1);
    StartRead(&observation_);
  }
  void OnDone() override { delete this; }

 private:
  RouterService& service_;
  v1::ReportSummary* summary_;
  v1::Observation observation_;
};

// One WatchKnobs call. Each update carries the whole state, so while a write is in flight only the
// latest waiting update is kept: a slow watcher skips states, never falls behind or grows a queue.
class WatchKnobsReactor final : public grpc::ServerWriteReactor<v1::KnobUpdate> {
 public:
  explicit WatchKnobsReactor(LiveRouter& router) : router_(router) {
    watch_ = router_.watchKnobs([this](const LiveRouter::KnobState& state) { offer(state); });
    if (watch_ < 0) {  // as many watchers as the router takes: refused, said so
      std::lock_guard lock(mutex_);
      ending_ = true;
      finishLocked(Status(StatusCode::RESOURCE_EXHAUSTED, "too many WatchKnobs streams (" +
                                                              std::to_string(LiveRouter::kMaxKnobWatchers) +
                                                              "); close one, or try again later"));
    }
  }
  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mutex_);
    writing_ = false;
    if (!ok) ending_ = true;  // the client went away
    if (ending_) return finishLocked(Status::CANCELLED);
    if (pending_) {
      current_ = std::move(*pending_);
      pending_.reset();
      writing_ = true;
      StartWrite(&current_);
    }
  }
  void OnCancel() override {
    std::lock_guard lock(mutex_);
    ending_ = true;
    if (!writing_) finishLocked(Status::CANCELLED);  // else when the write in flight is done
  }
  void OnDone() override {
    if (watch_ >= 0) router_.unwatchKnobs(watch_);  // no callback runs after this returns
    delete this;
  }

 private:
  void offer(const LiveRouter::KnobState& state) {
    v1::KnobUpdate update;
    update.set_policy(state.policy);
    update.set_who(state.who);
    for (const auto& [name, value] : state.knobs) {
      auto* k = update.add_knobs();
      k->set_name(name);
      k->set_value(value);
    }
    std::lock_guard lock(mutex_);
    if (ending_) return;
    if (writing_) {
      pending_ = std::move(update);
      return;
    }
    current_ = std::move(update);
    writing_ = true;
    StartWrite(&current_);
  }

  // Finish exactly once, and only with no write in flight.
  void finishLocked(Status status) {
    if (finished_) return;
    finished_ = true;
    Finish(std::move(status));
  }

  LiveRouter& router_;
  int watch_ = 0;
  std::mutex mutex_;
  bool writing_ = false, ending_ = false, finished_ = false;
  v1::KnobUpdate current_;
  std::optional<v1::KnobUpdate> pending_;
};

}  // namespace

RouterService::RouterService(LiveRouter& router, CallAuthorization auth) : router_(router), auth_(std::move(auth)) {
  const auto& workers = router_.spec().workers;
  for (std::size_t i = 0; i < workers.size(); ++i) worker_index_[workers[i].name] = static_cast<WorkerId>(i);
}

grpc::ServerUnaryReactor* RouterService::GetCluster(grpc::CallbackServerContext* ctx, const v1::GetClusterRequest*,
                                                    v1::Cluster* response) {
  auto* reactor = ctx->DefaultReactor();
  if (auto status = auth_.check(*ctx); !status.ok()) return finish(reactor, std::move(status));
  const LiveClusterSpec& spec = router_.spec();
  // One conversion of worker lists (RunStarted's), so names and roles read the same everywhere.
  RunStarted run;
  run.workers = spec.workers;
  run.prefill = spec.prefill;
  v1::RunStarted wire;
  toProto(run, &wire);
  *response->mutable_workers() = wire.workers();
  *response->mutable_prefill() = wire.prefill();
  response->set_block_size(spec.block_size);
  response->set_max_block_hashes(LiveRouter::kMaxBlockHashes);
  const LiveRouter::KnobState state = router_.knobState();
  response->set_policy(state.policy);
  for (const auto& [name, value] : state.knobs) {
    auto* k = response->add_knobs();
    k->set_name(name);
    k->set_value(value);
  }
  return finish(reactor, Status::OK);
}

grpc::ServerUnaryReactor* RouterService::Route(grpc::CallbackServerContext* ctx, const v1::RouteRequest* request,
                                               v1::RouteReply* response) {
  auto* reactor = ctx->DefaultReactor();
  if (auto status = auth_.check(*ctx); !status.ok()) return finish(reactor, std::move(status));
  auto invalid = [&](const std::string& why) { return finish(reactor, Status(StatusCode::INVALID_ARGUMENT, why)); };
  if (request->block_hashes_size() > LiveRouter::kMaxBlockHashes)
    return invalid("block_hashes: " + std::to_string(request->block_hashes_size()) + " hashes, at most " +
                   std::to_string(LiveRouter::kMaxBlockHashes));
  if (request->input_tokens() < 0)
    return invalid("input_tokens: " + std::to_string(request->input_tokens()) + " is negative");
  const std::int64_t block_size = router_.spec().block_size;
  if (request->token_ids_size() > 0 && request->block_hashes_size() > 0)
    return invalid("token_ids: give block_hashes or token_ids, not both");
  if (request->token_ids_size() > LiveRouter::kMaxBlockHashes * block_size)
    return invalid("token_ids: " + std::to_string(request->token_ids_size()) + " tokens, at most " +
                   std::to_string(LiveRouter::kMaxBlockHashes * block_size));
  if (request->turn() < 0) return invalid("turn: " + std::to_string(request->turn()) + " is negative");
  LiveRouter::RouteInput in;
  in.request = request->request_id();
  in.session = request->session_id();
  in.turn = request->turn();
  in.input_tokens = request->input_tokens();
  in.hashes.assign(request->block_hashes().begin(), request->block_hashes().end());
  if (request->token_ids_size() > 0) {
    const std::vector<std::uint32_t> tokens(request->token_ids().begin(), request->token_ids().end());
    in.hashes = tokenBlockHashes(tokens, static_cast<int>(block_size));
    if (in.input_tokens == 0) in.input_tokens = request->token_ids_size();
  }
  for (int i = 0; i < request->candidates_size(); ++i) {
    const auto it = worker_index_.find(request->candidates(i));
    if (it == worker_index_.end())
      return invalid("candidates[" + std::to_string(i) + "]: '" + request->candidates(i).substr(0, 64) +
                     "' is not a decode worker");
    in.candidates.push_back(it->second);
  }
  LiveRouter::RouteResult out = router_.route(in);
  const WorkerId chosen = out.decision.chosen;
  response->set_worker(chosen);
  if (chosen != kNoWorker) response->set_worker_name(router_.spec().workers[static_cast<std::size_t>(chosen)].name);
  v1::Event wire;
  toProto(Event{out.seq, 0, std::move(out.decision)}, &wire);
  response->mutable_decision()->Swap(wire.mutable_route());
  static constexpr std::pair<RoutePath, v1::RoutePath> kPaths[] = {{RoutePath::Direct, v1::ROUTE_PATH_DIRECT},
                                                                   {RoutePath::Seed, v1::ROUTE_PATH_SEED},
                                                                   {RoutePath::Reseed, v1::ROUTE_PATH_RESEED},
                                                                   {RoutePath::Transient, v1::ROUTE_PATH_TRANSIENT},
                                                                   {RoutePath::Local, v1::ROUTE_PATH_LOCAL}};
  for (const auto& [core, proto] : kPaths)
    if (core == out.path && chosen != kNoWorker) response->set_path(proto);
  response->set_seq(out.seq);
  return finish(reactor, Status::OK);
}

bool RouterService::apply(const v1::Observation& observation, std::string* error) {
  auto tooMany = [&](const char* field, int n) {
    if (n <= LiveRouter::kMaxBlockHashes) return false;
    *error = std::string(field) + ": " + std::to_string(n) + " hashes, at most " +
             std::to_string(LiveRouter::kMaxBlockHashes);
    return true;
  };
  switch (observation.kind_case()) {
    case v1::Observation::kEvent: {
      Event e;
      if (!fromProto(observation.event(), &e, error)) return false;
      capEventText(e.payload);  // a reason or traceback of any length becomes a bounded event
      return router_.observe(std::move(e.payload), error);
    }
    case v1::Observation::kBlocksStored: {
      const auto& b = observation.blocks_stored();
      if (tooMany("blocks_stored.block_hashes", b.block_hashes_size())) return false;
      const std::vector<BlockHash> hashes(b.block_hashes().begin(), b.block_hashes().end());
      return router_.blocksStored(b.worker(), b.session(), hashes, error);
    }
    case v1::Observation::kBlocksRemoved: {
      const auto& b = observation.blocks_removed();
      if (tooMany("blocks_removed.block_hashes", b.block_hashes_size())) return false;
      const std::vector<BlockHash> hashes(b.block_hashes().begin(), b.block_hashes().end());
      return router_.blocksRemoved(b.worker(), hashes, error);
    }
    case v1::Observation::KIND_NOT_SET:
      break;
  }
  *error = "kind: the observation carries no event, blocks_stored or blocks_removed";
  return false;
}

grpc::ServerReadReactor<v1::Observation>* RouterService::Report(grpc::CallbackServerContext* ctx,
                                                                v1::ReportSummary* response) {
  if (auto status = auth_.check(*ctx); !status.ok()) {
    struct Refused final : grpc::ServerReadReactor<v1::Observation> {
      explicit Refused(grpc::Status s) { Finish(std::move(s)); }
      void OnDone() override { delete this; }
    };
    return new Refused(std::move(status));
  }
  return new ReportReactor(*this, response);
}

grpc::ServerWriteReactor<v1::KnobUpdate>* RouterService::WatchKnobs(grpc::CallbackServerContext* ctx,
                                                                    const v1::WatchKnobsRequest*) {
  if (auto status = auth_.check(*ctx); !status.ok()) {
    struct Refused final : grpc::ServerWriteReactor<v1::KnobUpdate> {
      explicit Refused(grpc::Status s) { Finish(std::move(s)); }
      void OnDone() override { delete this; }
    };
    return new Refused(std::move(status));
  }
  return new WatchKnobsReactor(router_);
}

}  // namespace kvscope
