#pragma once
// Block hash -> the set of workers holding it, maintained only from the cluster's KV events
// (stored / removed), never by scanning a worker. Each entry also remembers which session stored
// the block first and whether another session has stored it since: a block only one session ever
// stored is that session's own ("exclusive").
//
// Sized for production clusters (ARCHITECTURE.md "The twin at scale"): up to kMaxWorkers (512)
// serving workers at 16 bytes a slot. A block is almost always held by one or two workers (its
// session's D, and the D it was reseeded to), so an entry keeps up to two worker ids inline and
// spills to a shared 512-bit set only for a block held by three or more (the boilerplate every
// D caches: few blocks, however many sessions use them). Sessions are interned to 32-bit
// ordinals, so an entry is 8 bytes beside its 8-byte hash.
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"
#include "core/router/HolderCodes.h"
#include "core/router/SessionOrdinals.h"

namespace kvscope {

class PrefixIndex {
 public:
  struct Match {
    // Longest run of the request's leading blocks resident on each worker (0..num_workers-1).
    std::array<std::int32_t, kMaxWorkers> prefix_blocks{};
    // Of those, how many are owned by the requesting session alone (shared boilerplate excluded).
    std::array<std::int32_t, kMaxWorkers> exclusive_blocks{};
    // The first position in the walked prefixes whose block only one other session ever stored
    // ("foreign"), or kNoForeign. A prefix before it holds only shared blocks and the session's own,
    // whose removals the index stamps apart (lastSharedRemoval, lastOwnRemoval): per-session state
    // can then tell that no removal touched it without reading the removal log. resume() lowers it
    // to the first foreign block it walks; match() starts it afresh.
    std::int32_t first_foreign = kNoForeign;

    // The workers of `dropped` stopped matching here: their counts are the walk's running totals.
    void settle(const WorkerSet& dropped, std::int32_t prefix, std::int32_t exclusive, int words) {
      dropped.forEach(
          [&](WorkerId w) {
            prefix_blocks[static_cast<std::size_t>(w)] = prefix;
            exclusive_blocks[static_cast<std::size_t>(w)] = exclusive;
          },
          words);
    }
  };
  static constexpr std::int32_t kNoForeign = std::numeric_limits<std::int32_t>::max();

  // Both return how many of the blocks the worker newly holds (stored) or no longer holds (removed).
  // `lost_exclusive`, when given, receives the sessions one of whose own blocks another session has
  // just stored too (their exclusive counts shrank): the per-session routing state drops them.
  // `shared_at`, when given, receives the positions in `hashes` whose block another session has
  // stored too (after this store every other block is the session's own).
  // Workers outside 0..kMaxWorkers-1 are ignored (0 returned).
  std::size_t stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes,
                     std::vector<SessionId>* lost_exclusive = nullptr, std::vector<std::uint32_t>* shared_at = nullptr);
  std::size_t removed(WorkerId worker, std::span<const BlockHash> hashes);
  // A crashed worker loses its whole pool; its restart starts cold.
  void clearWorker(WorkerId worker);

  bool holds(BlockHash h, WorkerId worker) const;
  WorkerSet holders(BlockHash h) const;
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
  // The same clock, split by whose block went: the latest tick at which `w` lost a block that more
  // than one session had stored (or was cleared), and the latest at which any worker lost a block
  // that only `session` had stored (0: never). Evictions mostly take one session's blocks, so a
  // prefix of shared blocks (the boilerplate every D holds) is rarely touched by them.
  std::uint64_t lastSharedRemoval(WorkerId w) const { return last_shared_removal_[static_cast<std::size_t>(w)]; }
  std::uint64_t lastOwnRemoval(SessionId session) const;
  // Changes on every store, removal or clear that changed a holder: a match computed at one
  // version still holds while the version is the same.
  std::uint64_t version() const { return version_; }
  // The hashes removed from `w` after tick `since` (appended to `out`), so that state taken then
  // can tell a removal that touched its chain from the usual one that did not (evictions mostly take
  // other sessions' cold blocks). False when they are more than `max`, or the log no longer
  // reaches back to `since` (a clear, or more than kRemovalLog removals since): assume the worst.
  bool removedSince(WorkerId w, std::uint64_t since, std::size_t max, std::vector<BlockHash>& out) const;
  static constexpr std::size_t kRemovalLog = 1024;  // per worker that ever lost a block: 16 KiB

  std::size_t size() const { return map_.size(); }
  // Bytes the index holds: the hash table (slots and control bytes), the spilled worker sets and
  // the session ordinals; not the per-worker removal logs (bounded, reported apart).
  std::size_t memoryBytes() const;
  std::size_t removalLogBytes() const;

 private:
  // 8 bytes. `owner`: the ordinal of the session that stored the block first, kShared set once
  // another session has stored it too. `holders`: a HolderCodes code.
  struct Entry {
    std::uint32_t owner = 0;
    std::uint32_t holders = 0;
  };
  static constexpr std::uint32_t kShared = SessionOrdinals::kShared;

  absl::flat_hash_map<BlockHash, Entry> map_;
  HolderCodes holders_;  // the codes' spilled sets
  SessionOrdinals ordinals_;
  std::uint64_t tick_ = 0;
  std::uint64_t version_ = 0;
  std::array<std::uint64_t, kMaxWorkers> last_removal_{};
  std::array<std::uint64_t, kMaxWorkers> last_shared_removal_{};
  std::vector<std::uint64_t> own_removal_;  // ordinal -> tick (grown on a removal)
  struct Removal {
    std::uint64_t tick = 0;
    BlockHash hash = 0;
  };
  // Per worker, a ring of its latest removals (allocated on its first); `forgotten_` is the newest
  // tick whose removals may have left the ring.
  std::array<std::vector<Removal>, kMaxWorkers> removals_;
  std::array<std::uint32_t, kMaxWorkers> removals_next_{};
  std::array<std::uint64_t, kMaxWorkers> forgotten_{};
};

}  // namespace kvscope
