#pragma once
// The SGLang router's own approximate prefix tree (sgl-router/src/policies/tree.rs):
// one tree shared by all workers ("tenants"), holding what the router sent where -
// every routing decision inserts the request under the chosen worker - and never told what the
// engines evicted. The router only trims it by size: evict_tenant_by_size drops a tenant's least
// recently used leaves until its size is at most max_tree_size.
//
// Upstream stores request text and counts characters; KVScope's requests are block hashes, so the
// tree stores hash sequences and sizes count blocks. The model is one element per block: each
// element has its tenants (in the order they first reached it) and each tenant's last access, and
// eviction takes one element at a time. Like upstream, the nodes are radix runs - a chain of
// elements with one tenant list - so a decision costs one child lookup per run, not per block. A
// run splits wherever its elements would diverge (a path or a match ending inside it, an eviction
// of its tail), and runs alike again are re-merged, so every result is the per-element tree's
// (tests/support/PerElementRadixTree.h is that tree; test_approx_radix_tree replays both).
//
// One caveat, shared with upstream (its eviction heap orders by timestamp only): leaves of one
// tenant with equal access times are evicted in an unspecified order. Here that order is by node
// id and run, so it can differ from the per-element tree's; with `now` strictly increasing across
// operations (or a prefixMatch and insert of the same prompt sharing one `now`, as the policy
// does) no two leaves of a tenant ever tie.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"

namespace kvscope {

class ApproxRadixTree {
 public:
  struct Match {
    std::int64_t matched = 0;              // elements of the query matched (tree.rs prefix_match's text)
    WorkerId tenant = kNoWorker;           // the tenant prefix_match returns; kNoWorker for "empty"
    std::vector<std::int64_t> per_tenant;  // each tenant's own match along that path (for display)
  };

  explicit ApproxRadixTree(int num_tenants);

  // tree.rs insert: the path of `seq` gets `tenant` (its size grows by the elements new to it).
  void insert(std::span<const BlockHash> seq, WorkerId tenant, std::uint64_t now);
  // tree.rs prefix_match: walks the longest matching path and returns the first tenant of the
  // last element reached (upstream: the first key of that node's tenant map), refreshing its
  // access time from that element to the root.
  Match prefixMatch(std::span<const BlockHash> seq, std::uint64_t now);
  // tree.rs get_smallest_tenant: the tenant with the fewest elements (ties: the lowest id).
  WorkerId smallestTenant() const;
  void evictTenantBySize(std::int64_t max_size);
  std::int64_t size(WorkerId tenant) const { return sizes_[static_cast<std::size_t>(tenant)]; }
  // Runs in use, the root not counted (how far the compression got; the tests watch it).
  std::size_t nodeCount() const { return nodes_.size() - 1 - free_.size(); }

 private:
  using Tenants = std::vector<std::pair<WorkerId, std::uint64_t>>;  // in the order they reached it; last access
  struct Node {
    std::uint32_t parent = 0;
    std::vector<BlockHash> elems;                            // the run; empty only for the root and for free nodes
    absl::flat_hash_map<BlockHash, std::uint32_t> children;  // by their first element
    Tenants tenants;                                         // every element of the run has exactly these
  };
  static std::uint64_t* accessOf(Node& n, WorkerId t);
  bool alive(std::uint32_t n) const { return n != 0 && !nodes_[n].elems.empty(); }
  std::uint32_t allocate();
  void release(std::uint32_t n, std::vector<std::uint32_t>& freed);
  std::uint32_t split(std::uint32_t n, std::size_t at);
  bool absorbable(std::uint32_t n) const;
  void absorbOnlyChild(std::uint32_t n);
  void remerge(std::uint32_t n);
  void touch(std::uint32_t n, WorkerId t, std::uint64_t now);

  std::vector<Node> nodes_;  // [0] is the root; removed nodes are recycled through free_
  std::vector<std::uint32_t> free_;
  std::vector<std::int64_t> sizes_;
};

}  // namespace kvscope
