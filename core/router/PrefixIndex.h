#pragma once
// Block hash -> the set of workers holding it, maintained only from the cluster's KV events
// (stored / removed), never by scanning a worker. A flat hash map to a 64-bit worker mask.
// Each entry also remembers which session stored the block first and whether another session has
// stored it since: a block only one session ever stored is that session's own ("exclusive").
#include <array>
#include <cstdint>
#include <span>
#include <vector>

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
  // `lost_exclusive`, when given, receives the sessions one of whose own blocks another session has
  // just stored too (their exclusive counts shrank): the per-session routing state drops them.
  std::size_t stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes,
                     std::vector<SessionId>* lost_exclusive = nullptr);
  std::size_t removed(WorkerId worker, std::span<const BlockHash> hashes);
  // A crashed worker loses its whole pool; its restart starts cold.
  void clearWorker(WorkerId worker);

  WorkerMask holders(BlockHash h) const;
  void match(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& out) const;
  // The same match, continued: on entry `inout` holds, per worker, a depth d whose leading d blocks
  // are known to be resident there (and how many of them are the session's own); the walk checks
  // only from each worker's d on, so a session's next turn costs its new blocks, not its history.
  // With every depth 0 it is match().
  void resume(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& inout) const;

  // Removal clock: every removal (or clear) that took a block off a worker stamps that worker with
  // the next tick. A match taken at tick t still holds for worker w while lastRemoval(w) <= t,
  // because stored blocks can only lengthen a match and resume() re-walks from the old depth.
  std::uint64_t tick() const { return tick_; }
  std::uint64_t lastRemoval(WorkerId w) const { return last_removal_[static_cast<std::size_t>(w)]; }
  // The hashes removed from `w` after tick `since` (appended to `out`), so that state taken then
  // can tell a removal that touched its chain from the usual one that did not (evictions mostly take
  // other sessions' cold blocks). False when they are more than `max`, or the log no longer
  // reaches back to `since` (a clear, or more than kRemovalLog removals since): assume the worst.
  bool removedSince(WorkerId w, std::uint64_t since, std::size_t max, std::vector<BlockHash>& out) const;
  static constexpr std::size_t kRemovalLog = 1024;  // per worker: 16 KiB

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
  std::uint64_t tick_ = 0;
  std::array<std::uint64_t, kMaxWorkers> last_removal_{};
  struct Removal {
    std::uint64_t tick = 0;
    BlockHash hash = 0;
  };
  // Per worker, a ring of its latest removals (allocated on its first); `forgotten_` is the newest
  // tick whose removals may have left the ring.
  std::array<std::vector<Removal>, kMaxWorkers> removals_;
  std::array<std::size_t, kMaxWorkers> removals_next_{};
  std::array<std::uint64_t, kMaxWorkers> forgotten_{};
};

}  // namespace kvscope
