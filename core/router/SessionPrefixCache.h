#pragma once
// Per-session prefix state: where a session's chain stood on each worker at its
// last decision, so the decision for its next turn walks only the new blocks instead of the whole
// history. A turn's prompt extends the previous one. The simulator's block hashes are
// prefix-chained ("equal hashes mean equal prefixes", trace/BlockChain.h) and so are vLLM's,
// SGLang's and Dynamo's, but the Router RPC does not require it of a client: the extension is
// checked with a fingerprint of the whole old chain (one sequential pass over the hashes, ~1 ns a
// block against a cache-missing map lookup of tens) as well as its last block.
//
// What can make a remembered depth wrong, and how it is caught:
//  - a stored block only lengthens a match: PrefixIndex::resume() re-walks from each worker's old
//    depth, so a block stored since at that depth (or beyond) is picked up;
//  - a removed block can shorten it: every removal stamps its worker with the index's removal tick.
//    A worker removed-from since the state was taken needs no more if its prefix has no block only
//    another session stored (Match::first_foreign) and the index's split stamps show no removal of
//    a shared block from it, nor of one of the session's own (when its prefix has any) from anywhere:
//    evictions take other sessions' blocks, so this clears most workers at once. Otherwise the
//    index's log of its recent removals is checked against the remembered prefix (one sequential
//    pass over the prompt, no index lookups), and the worker starts again from depth 0 only if one
//    of them lies in it, or if the removals are too many or too old to tell (then the walk is the
//    full recomputation's for that worker);
//  - the session's own store (its prompt prefilled or transferred to a worker) deepens that worker's
//    remembered prefix to the whole prompt of the last decision when the stored blocks continue it
//    (checked with the fingerprint of the prompt up to the worker's depth), so the next turn does not
//    walk the previous turn's blocks again;
//  - another session storing one of this session's own blocks shrinks its exclusive count: the
//    router drops that session's state (PrefixIndex::stored reports the owner).
// A block can only become the session's own again by leaving the index entirely (a removal, so
// the tick catches it). The result equals PrefixIndex::match() on the same prompt; the router keeps
// that full recomputation selectable to check it.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/router/PrefixIndex.h"

namespace kvscope {

class SessionPrefixCache {
 public:
  // Bounded: a state costs ~120 bytes plus 24 per worker whose depth differs from the session's
  // most common one (usually its own D and the D it was reseeded to), so 64K sessions stay near
  // 10 MB however many workers the cluster has. Beyond it the least recently routed eighth is
  // dropped (they recompute once).
  static constexpr std::size_t kDefaultCapacity = 65536;
  explicit SessionPrefixCache(std::size_t capacity = kDefaultCapacity) : capacity_(capacity < 8 ? 8 : capacity) {}

  // PrefixIndex::match(hashes, session, num_workers, out), resumed from the session's last state
  // where it still holds, and that state replaced by this decision's.
  void match(const PrefixIndex& index, std::span<const BlockHash> hashes, SessionId session, int num_workers,
             PrefixIndex::Match& out);
  // The session's blocks just stored on `worker` (PrefixIndex::stored, with the positions it
  // reported shared): deepens the worker's remembered prefix where they continue it.
  void stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes,
              std::span<const std::uint32_t> shared_at);
  void forget(SessionId session) { states_.erase(session); }
  void clear() { states_.clear(); }

  std::size_t size() const { return states_.size(); }
  std::uint64_t resumed() const { return resumed_; }  // decisions that continued a session's state
  std::uint64_t recomputed() const { return recomputed_; }
  std::uint64_t deepened() const { return deepened_; }           // stores that deepened a state
  std::uint64_t stampCleared() const { return stamp_cleared_; }  // removed-from workers cleared by the stamps alone

 private:
  // A worker whose depth differs from the state's common one; `print` is the chain's fingerprint up
  // to its depth, so that a store continuing it can be recognised.
  struct Depth {
    std::int32_t worker = 0;
    std::int32_t prefix = 0;
    std::int32_t exclusive = 0;
    std::uint64_t print = 0;
  };
  struct State {
    std::uint32_t length = 0;        // blocks in the chain of the last decision
    std::int32_t workers = 0;        // the cluster's size then
    BlockHash last = 0;              // its last block's hash
    std::uint64_t fingerprint = 0;   // of the whole chain (Prints below)
    std::uint64_t tick = 0;          // the index's removal tick when it was taken
    std::uint64_t used = 0;          // decision counter, for dropping the least recently routed
    std::int32_t common_prefix = 0;  // the depth most workers had
    std::int32_t common_exclusive = 0;
    std::uint64_t common_print = 0;
    std::int32_t first_foreign = PrefixIndex::kNoForeign;  // Match::first_foreign
    std::vector<Depth> others;
  };
  // Removals looked at per decision, in all: past it a worker with removals since restarts from
  // depth 0 (a walk over what it held, shared with every other restarting worker, costs less than
  // checking thousands of removals: in a 256-D cluster most workers evicted something since a
  // session's last turn).
  static constexpr std::size_t kRemovalBudget = 2048;
  static constexpr std::size_t kMaxRemovalsChecked = 512;  // per worker
  // Workers whose remembered prefix (`depth`, restored from `st`) lost a block since `st` was taken.
  WorkerSet removedFromChain(const PrefixIndex& index, std::span<const BlockHash> hashes, SessionId session,
                             const State& st, const PrefixIndex::Match& depth);
  void save(const PrefixIndex::Match& m, int n, State& st) const;
  static void restore(const State& st, int n, PrefixIndex::Match& m);
  void evictOldest();
  // Fingerprints are a polynomial over the (mixed) hashes, f(x0..xk) = f(x0..xk-1) * B + mix(xk)
  // mod 2^64, so the fingerprint of a chain's slice follows from those of two of its prefixes.
  static constexpr std::uint64_t kPrintBase = 0x9e3779b97f4a7c15ULL;  // odd, so B^k never vanishes
  static std::uint64_t extend(std::uint64_t print, BlockHash h);
  static std::uint64_t power(std::size_t k);  // B^k
  // prints_[i]: the fingerprint of the decision's first i blocks.
  void fillPrints(std::span<const BlockHash> hashes);

  std::size_t capacity_;
  std::uint64_t clock_ = 0;
  std::uint64_t resumed_ = 0;
  std::uint64_t recomputed_ = 0;
  std::uint64_t deepened_ = 0;
  std::uint64_t stamp_cleared_ = 0;
  absl::flat_hash_map<SessionId, State> states_;
  std::vector<std::uint64_t> prints_;
  // Scratch for removedFromChain: the removals found, chained per hash (`first_` -> the newest
  // entry, each entry -> the previous one for the same hash), and a filter of their hashes.
  struct Removed {
    WorkerId worker = 0;
    std::uint32_t previous = 0;  // index + 1 in removed_, 0 = none
  };
  static constexpr std::size_t kFilterWords = 512;  // 32,768 bits: 4 KiB, stays in L1
  std::vector<BlockHash> log_;
  std::vector<Removed> removed_;
  absl::flat_hash_map<BlockHash, std::uint32_t> first_;
  std::array<std::uint64_t, kFilterWords> filter_{};
};

}  // namespace kvscope
