#include "core/run/UnreportedRequests.h"

#include <algorithm>

namespace kvscope {

void UnreportedRequests::routed(RequestId request, WorkerId worker, SimTime at, std::size_t hashes) {
  forget(request);
  const std::uint64_t generation = next_generation_++;
  live_.emplace(request, Live{worker, generation, hashes});
  hashes_ += hashes;
  ++per_worker_[static_cast<std::size_t>(worker)];
  auto& order = order_[static_cast<std::size_t>(worker)];
  order.push_back(Entry{at, request, generation});
  prune(order);
}

void UnreportedRequests::reported(RequestId request) { forget(request); }

void UnreportedRequests::forget(RequestId request) {
  const auto it = live_.find(request);
  if (it == live_.end()) return;
  hashes_ -= it->second.hashes;
  --per_worker_[static_cast<std::size_t>(it->second.worker)];
  live_.erase(it);
}

bool UnreportedRequests::isLive(const Entry& e) const {
  const auto it = live_.find(e.request);
  return it != live_.end() && it->second.generation == e.generation;
}

void UnreportedRequests::prune(std::deque<Entry>& order) {
  while (!order.empty() && !isLive(order.front())) order.pop_front();
  // Reported entries behind a live one stay until it goes: rebuild when they are most of the queue.
  const std::size_t live = per_worker_[static_cast<std::size_t>(&order - order_.data())];
  if (order.size() > 2 * live + 1024)
    order.erase(std::remove_if(order.begin(), order.end(), [&](const Entry& e) { return !isLive(e); }), order.end());
}

std::vector<UnreportedRequests::Due> UnreportedRequests::due(SimTime now, const Limits& limits) {
  std::vector<Due> out;
  const auto take = [&](std::size_t w) {
    auto& order = order_[w];
    const Entry e = order.front();
    order.pop_front();
    out.push_back(Due{e.request, static_cast<WorkerId>(w)});
    forget(e.request);
    prune(order);
  };
  for (std::size_t w = 0; w < order_.size(); ++w) {
    prune(order_[w]);
    while (!order_[w].empty() && (now - order_[w].front().at > limits.expiry || per_worker_[w] > limits.max_per_worker))
      take(w);
  }
  // Over an overall cap: the oldest across the workers goes first.
  while (live_.size() > limits.max_requests || hashes_ > limits.max_hashes) {
    std::size_t oldest = order_.size();
    for (std::size_t w = 0; w < order_.size(); ++w)
      if (!order_[w].empty() && (oldest == order_.size() || order_[w].front().at < order_[oldest].front().at))
        oldest = w;
    if (oldest == order_.size()) break;
    take(oldest);
  }
  return out;
}

void UnreportedRequests::compact() {
  live_.rehash(0);
  for (auto& order : order_) order.shrink_to_fit();
}

}  // namespace kvscope
