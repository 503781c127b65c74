#include "core/live/LiveClusterLayout.h"

namespace kvscope {

LiveClusterLayout LiveClusterLayout::of(const ClusterConfig& config) {
  LiveClusterLayout l;
  l.run.scenario = "live " + config.name;
  l.run.profile = "live";
  std::int32_t prefills = 0;
  WorkerId serving = 0;
  for (const auto& w : config.workers) {
    LiveWorkerRef r;
    r.name = w.id;
    r.role = w.role;
    r.engine = w.engine;
    r.kv_capacity = w.kv_capacity_tokens;
    if (w.role == WorkerRole::Prefill) {
      r.prefill = prefills++;
      l.run.prefill.push_back({w.id, w.role, w.kv_capacity_tokens});
      if (!w.bootstrap_address.empty()) l.book.prefill_by_address[w.bootstrap_address] = r.prefill;
    } else {
      r.worker = serving++;
      l.run.workers.push_back({w.id, w.role, w.kv_capacity_tokens});
      if (w.role == WorkerRole::Decode) l.book.decode_workers.push_back(r.worker);
      if (!w.mooncake_address.empty()) l.book.decode_by_address[w.mooncake_address] = r.worker;
    }
    l.refs.push_back(std::move(r));
  }
  // A decode log line names no P; with one P (the lab's 1P+3D) that is the one. A prefill line
  // without an address names its D only when there is a single D.
  for (auto& r : l.refs) {
    r.peer_prefill = prefills == 1 ? 0 : -1;
    r.peer_decode = l.book.decode_workers.size() == 1 ? l.book.decode_workers.front() : kNoWorker;
  }
  return l;
}

std::size_t LiveClusterLayout::statusIndex(const LiveWorkerRef& r) const {
  return r.role == WorkerRole::Prefill ? run.workers.size() + static_cast<std::size_t>(r.prefill)
                                       : static_cast<std::size_t>(r.worker);
}

}  // namespace kvscope
