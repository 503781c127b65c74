#pragma once
// kvscope.v1.Router over a LiveRouter: a real cluster's router routes through the core (Route),
// reports what it observed (Report, a client stream), and follows policy and knob changes made in
// the console or through Control (WatchKnobs, a server stream). Every request is validated on the
// RPC thread before it reaches the router; guarded by the same bearer token as Control.
#include <optional>
#include <string>

#include <absl/container/flat_hash_map.h>

#include "backend/service/CallAuthorization.h"
#include "core/run/LiveRouter.h"
#include "kvscope/v1/router.grpc.pb.h"

namespace kvscope {

class RouterService final : public v1::Router::CallbackService {
 public:
  // `router` must outlive the service.
  RouterService(LiveRouter& router, CallAuthorization auth = {});

  grpc::ServerUnaryReactor* GetCluster(grpc::CallbackServerContext* ctx, const v1::GetClusterRequest* request,
                                       v1::Cluster* response) override;
  grpc::ServerUnaryReactor* Route(grpc::CallbackServerContext* ctx, const v1::RouteRequest* request,
                                  v1::RouteReply* response) override;
  grpc::ServerReadReactor<v1::Observation>* Report(grpc::CallbackServerContext* ctx,
                                                   v1::ReportSummary* response) override;
  grpc::ServerWriteReactor<v1::KnobUpdate>* WatchKnobs(grpc::CallbackServerContext* ctx,
                                                       const v1::WatchKnobsRequest* request) override;

  // Applies one observation; false with a message naming the field. Public for the Report reactor.
  bool apply(const v1::Observation& observation, std::string* error);
  void flush() { router_.flush(); }  // a Report call ended

 private:
  LiveRouter& router_;
  CallAuthorization auth_;
  absl::flat_hash_map<std::string, WorkerId> worker_index_;  // decode worker name -> index
};

}  // namespace kvscope
