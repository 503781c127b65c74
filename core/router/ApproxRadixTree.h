#pragma once
// The SGLang router's own approximate prefix tree (sgl-router/src/policies/tree.rs):
// one tree shared by all workers ("tenants"), holding what the router sent where -
// every routing decision inserts the request under the chosen worker - and never told what the
// engines evicted. The router only trims it by size: evict_tenant_by_size drops a tenant's least
// recently used leaves until its size is at most max_tree_size.
//
// Upstream stores request text and counts characters; KVScope's requests are block hashes, so the
// tree stores hash sequences and sizes count blocks. One node per element (upstream compresses
// runs into radix nodes; every element of a node carries the same tenants, so matches, tenants at
// the match and sizes are the same).
#include <span>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"

namespace kvscope {

class ApproxRadixTree {
 public:
  struct Match {
    std::int64_t matched = 0;        // elements of the query matched (tree.rs prefix_match's text)
    WorkerId tenant = kNoWorker;     // the tenant prefix_match returns; kNoWorker for "empty"
    std::vector<std::int64_t> per_tenant;  // each tenant's own match along that path (for display)
  };

  explicit ApproxRadixTree(int num_tenants);

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

}  // namespace kvscope
