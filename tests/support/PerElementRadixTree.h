#pragma once
// The per-element PerElementRadixTree (one node per element), as core/router kept it before the tree
// was compressed into runs: a test-only reference that test_approx_radix_tree replays the compressed
// tree against. Copied verbatim but for the name and `inline`; do not "improve" it.
#include <algorithm>
#include <cstdint>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"

namespace kvscope::test {

class PerElementRadixTree {
 public:
  struct Match {
    std::int64_t matched = 0;              // elements of the query matched (tree.rs prefix_match's text)
    WorkerId tenant = kNoWorker;           // the tenant prefix_match returns; kNoWorker for "empty"
    std::vector<std::int64_t> per_tenant;  // each tenant's own match along that path (for display)
  };

  explicit PerElementRadixTree(int num_tenants);

  // tree.rs insert: the path of `seq` gets `tenant` (its size grows by the elements new to it).
  void insert(std::span<const BlockHash> seq, WorkerId tenant, std::uint64_t now);
  // tree.rs prefix_match: walks the longest matching path and returns the first tenant of the
  // last node reached (upstream: the first key of that node's tenant map), refreshing its access
  // time along the path.
  Match prefixMatch(std::span<const BlockHash> seq, std::uint64_t now);
  // tree.rs get_smallest_tenant: the tenant with the fewest elements (ties: the lowest id).
  WorkerId smallestTenant() const;
  void evictTenantBySize(std::int64_t max_size);
  std::int64_t size(WorkerId tenant) const { return sizes_[static_cast<std::size_t>(tenant)]; }

 private:
  struct Node {
    std::uint32_t parent = 0;
    BlockHash key = 0;
    absl::flat_hash_map<BlockHash, std::uint32_t> children;
    std::vector<std::pair<WorkerId, std::uint64_t>> tenants;  // in the order they reached the node; last access
  };
  static std::uint64_t* accessOf(Node& n, WorkerId t);

  std::vector<Node> nodes_;  // [0] is the root; removed nodes are recycled through free_
  std::vector<std::uint32_t> free_;
  std::vector<std::int64_t> sizes_;
};

inline PerElementRadixTree::PerElementRadixTree(int num_tenants)
    : nodes_(1), sizes_(static_cast<std::size_t>(num_tenants), 0) {
  // init_workers inserts "" for every worker: each is a tenant of the root from the start.
  for (WorkerId t = 0; t < num_tenants; ++t) nodes_[0].tenants.push_back({t, 0});
}

inline std::uint64_t* PerElementRadixTree::accessOf(Node& n, WorkerId t) {
  for (auto& [tenant, at] : n.tenants)
    if (tenant == t) return &at;
  return nullptr;
}

inline void PerElementRadixTree::insert(std::span<const BlockHash> seq, WorkerId tenant, std::uint64_t now) {
  if (tenant < 0 || static_cast<std::size_t>(tenant) >= sizes_.size()) return;
  std::uint32_t cur = 0;
  if (auto* at = accessOf(nodes_[0], tenant)) *at = now;
  for (BlockHash h : seq) {
    auto it = nodes_[cur].children.find(h);
    std::uint32_t next;
    if (it == nodes_[cur].children.end()) {
      if (!free_.empty()) {
        next = free_.back();
        free_.pop_back();
        nodes_[next] = Node{};
      } else {
        next = static_cast<std::uint32_t>(nodes_.size());
        nodes_.emplace_back();
      }
      nodes_[next].parent = cur;
      nodes_[next].key = h;
      nodes_[cur].children.emplace(h, next);
    } else {
      next = it->second;
    }
    Node& n = nodes_[next];
    if (auto* at = accessOf(n, tenant)) {
      *at = now;
    } else {
      n.tenants.push_back({tenant, now});
      ++sizes_[static_cast<std::size_t>(tenant)];
    }
    cur = next;
  }
}

inline PerElementRadixTree::Match PerElementRadixTree::prefixMatch(std::span<const BlockHash> seq, std::uint64_t now) {
  Match m;
  m.per_tenant.assign(sizes_.size(), 0);
  std::uint32_t cur = 0;
  for (BlockHash h : seq) {
    auto it = nodes_[cur].children.find(h);
    if (it == nodes_[cur].children.end()) break;
    cur = it->second;
    ++m.matched;
    for (const auto& [t, at] : nodes_[cur].tenants) m.per_tenant[static_cast<std::size_t>(t)] = m.matched;
  }
  if (nodes_[cur].tenants.empty()) return m;  // "empty"
  m.tenant = nodes_[cur].tenants.front().first;
  // Refresh the chosen tenant's access time from the node to the root.
  for (std::uint32_t n = cur;; n = nodes_[n].parent) {
    if (auto* at = accessOf(nodes_[n], m.tenant)) *at = now;
    if (n == 0) break;
  }
  return m;
}

inline WorkerId PerElementRadixTree::smallestTenant() const {
  WorkerId best = kNoWorker;
  for (WorkerId t = 0; t < static_cast<WorkerId>(sizes_.size()); ++t)
    if (best == kNoWorker || sizes_[static_cast<std::size_t>(t)] < sizes_[static_cast<std::size_t>(best)]) best = t;
  return best;
}

inline void PerElementRadixTree::evictTenantBySize(std::int64_t max_size) {
  // tree.rs: every (node, tenant) where the node is a leaf for that tenant, oldest access first;
  // a tenant over max_size loses the node, and the parent becomes a candidate if it is now a leaf.
  using Entry = std::tuple<std::uint64_t, WorkerId, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> pq;
  const auto isLeafFor = [&](std::uint32_t n, WorkerId t) {
    if (!accessOf(nodes_[n], t)) return false;
    for (const auto& [key, child] : nodes_[n].children)
      if (accessOf(nodes_[child], t)) return false;
    return true;
  };
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t n = stack.back();
    stack.pop_back();
    for (const auto& [key, child] : nodes_[n].children) stack.push_back(child);
    if (n == 0) continue;
    for (const auto& [t, at] : nodes_[n].tenants)
      if (isLeafFor(n, t)) pq.push({at, t, n});
  }
  while (!pq.empty()) {
    const auto [at, t, n] = pq.top();
    pq.pop();
    if (sizes_[static_cast<std::size_t>(t)] <= max_size) continue;
    auto& tenants = nodes_[n].tenants;
    const auto it = std::find_if(tenants.begin(), tenants.end(), [&](const auto& e) { return e.first == t; });
    if (it == tenants.end()) continue;
    tenants.erase(it);
    --sizes_[static_cast<std::size_t>(t)];
    const std::uint32_t parent = nodes_[n].parent;
    if (tenants.empty() && nodes_[n].children.empty()) {
      nodes_[parent].children.erase(nodes_[n].key);
      free_.push_back(n);
    }
    if (parent != 0 && isLeafFor(parent, t)) pq.push({*accessOf(nodes_[parent], t), t, parent});
  }
}

}  // namespace kvscope::test
