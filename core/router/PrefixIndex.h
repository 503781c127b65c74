#pragma once
// Block hash -> the set of workers holding it, maintained only from the cluster's KV events
// (stored / removed), never by scanning a worker. A flat hash map to a 64-bit worker mask.
// Each entry also remembers which session stored the block first and whether another session has
// stored it since: a block only one session ever stored is that session's own ("exclusive").
#include <array>
#include <cstdint>
#include <span>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"

namespace kvscope {

class PrefixIndex {
 public:
  using WorkerMask = std::uint64_t;

  struct Match {
    // Longest run of the request's leading blocks resident on each worker.
    std::array<std::int32_t, kMaxWorkers> prefix_blocks{};
    // Of those, how many are owned by the requesting session alone (shared boilerplate excluded).
    std::array<std::int32_t, kMaxWorkers> exclusive_blocks{};
  };

  // Both return how many of the blocks the worker newly holds (stored) or no longer holds (removed).
  std::size_t stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes);
  std::size_t removed(WorkerId worker, std::span<const BlockHash> hashes);
  // A crashed worker loses its whole pool; its restart starts cold.
  void clearWorker(WorkerId worker);

  WorkerMask holders(BlockHash h) const;
  void match(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& out) const;

  std::size_t size() const { return map_.size(); }

 private:
  // 16 bytes, so the map stays as cache-friendly as a plain hash -> mask map: the session that
  // stored the block first, with the top bit set once another session has stored it too.
  struct Entry {
    WorkerMask workers = 0;
    std::uint64_t owner = 0;
    static constexpr std::uint64_t kShared = std::uint64_t{1} << 63;
    bool exclusiveTo(SessionId s) const { return owner == s; }  // false once kShared is set
  };
  absl::flat_hash_map<BlockHash, Entry> map_;
};

}  // namespace kvscope
