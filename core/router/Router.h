#pragma once
// The router core: the prefix index (fed by KV events), the session bindings and the selected
// policy. The simulator drives it, and later the Router RPC drives the same object for a real
// cluster. Admission (budgets, backoff, migration) is applied by its caller around decide().
#include <memory>
#include <string>

#include <absl/container/flat_hash_map.h>

#include "core/events/KvEventListener.h"
#include "core/knobs/KnobRegistry.h"
#include "core/model/Distribution.h"
#include "core/router/ChainIndex.h"
#include "core/router/PrefixIndex.h"
#include "core/router/ProxyBlockCache.h"
#include "core/router/RoutingPolicy.h"
#include "core/router/SessionPrefixCache.h"

namespace kvscope {

class Router : public KvEventListener {
 public:
  // Where the prefix index keeps what workers hold. PerBlock (PrefixIndex, with SessionPrefixCache
  // resuming each session's match): for events that come as bare block lists, as a real cluster's
  // do (LiveRouter). Chain (ChainIndex): for events that name their chain (onChainStored), as the
  // twin's pools send them; a decision then walks the prompt's runs, with no per-session state.
  // The two give the same matches, and so the same decisions (tests/core/test_twin_equivalence).
  enum class IndexKind { PerBlock, Chain };

  Router(int num_workers, int block_size, const KnobRegistry& knobs, std::uint64_t seed,
         IndexKind index = IndexKind::PerBlock);

  // Returns false (and keeps the current policy) for an unknown name.
  bool setPolicy(std::string_view name);
  std::string_view policyName() const { return policy_->name(); }
  bool lowerIsBetter() const { return policy_->lowerIsBetter(); }

  // Ranks every candidate under the current policy; `out` is reused to avoid allocations.
  void decide(const RouteRequest& request, std::span<const WorkerLoad> loads, RouteDecision& out);
  // The epsilon retry after an admission failure at rank `pos`: the runner-up if it is worth one
  // more try, else -1. For kv-aware policies it must score within `epsilon` of the best, so a fresh
  // session spills to the next worker while a sticky one (sticky bonus) stays and reseeds.
  int nextRetry(const RouteDecision& decision, int pos) const;

  void bind(SessionId session, WorkerId worker);
  void unbind(SessionId session);
  WorkerId boundWorker(SessionId session) const;
  int assignedSessions(WorkerId worker) const { return assigned_[static_cast<std::size_t>(worker)]; }
  // Sessions decide() ever placed on `worker` that were not bound there (the lab's
  // decode_assignment_counts, which its load floor compares): counted when chosen, never decremented.
  std::int64_t assignments(WorkerId worker) const { return assignments_[static_cast<std::size_t>(worker)]; }

  IndexKind indexKind() const { return index_kind_; }
  // The per-block index (IndexKind::PerBlock; empty otherwise) and the per-run one (Chain).
  const PrefixIndex& index() const { return index_; }
  const ChainIndex& chainIndex() const { return chain_; }
  // Of whichever index is in use: blocks known, and bytes held.
  std::size_t indexBlocks() const;
  std::size_t indexBytes() const;
  // The prefix match the last decide() computed (per worker: leading blocks cached).
  const PrefixIndex::Match& lastMatch() const { return match_; }
  // Where the last decide() spent its time, when timing is on: the prefix lookup (the index's match,
  // and the proxy's LRU under that view) and the policy's scoring. Off by default: two clock reads
  // a decision cost the fastest policies a few percent.
  struct PhaseTimes {
    std::int64_t lookup_ns = 0;
    std::int64_t score_ns = 0;
  };
  void setPhaseTiming(bool on) { phase_timing_ = on; }
  const PhaseTimes& lastPhaseTimes() const { return phase_times_; }
  // On (the default), decide() resumes each session's match from its previous turn
  // (SessionPrefixCache); off, it recomputes the match over the whole prompt. Same decisions either
  // way: the switch exists so tests and bench_router can compare the two.
  void setSessionState(bool on);
  bool sessionState() const { return session_state_; }
  const SessionPrefixCache& sessionCache() const { return session_cache_; }
  int numWorkers() const { return num_workers_; }
  int blockSize() const { return block_size_; }

  // KV events from a real cluster's router (LiveRouter), counting the blocks whose holder changed.
  std::size_t storeBlocks(WorkerId worker, SessionId session, std::span<const BlockHash> hashes);
  std::size_t removeBlocks(WorkerId worker, std::span<const BlockHash> hashes);

  // The requests the router tracks per worker (Dynamo's ActiveSequences): sent to `worker` (again
  // on a retry elsewhere), prefilled, finished or failed.
  void track(RequestId request, WorkerId worker, std::span<const BlockHash> hashes, std::int64_t input_tokens);
  void prefillDone(RequestId request) { active_.prefillDone(request); }
  void release(RequestId request) { active_.free(request); }
  void compact() { active_.compact(); }  // the tracked-request tables' room back, after a purge
  const ActiveSequences& active() const { return active_; }
  // Disaggregated serving: the router picks the decode worker (Dynamo's decode router then scores
  // by load alone). Aggregated: it picks the instance that prefills too.
  void setDisaggregated(bool d) { disaggregated_ = d; }

  // The proxy's LRU estimate of what each worker caches (cache_view proxy-lru).
  const ProxyBlockCache& proxyCache() const { return proxy_cache_; }

  // KV events from the cluster.
  void onBlocksStored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes) override;
  void onBlocksRemoved(WorkerId worker, std::span<const BlockHash> hashes) override;
  void onWorkerCleared(WorkerId worker) override;
  void onChainStored(WorkerId worker, SessionId session, std::span<const BlockHash> path, std::size_t from) override;
  void onChainRemoved(WorkerId worker, std::span<const BlockHash> path, std::size_t from) override;

 private:
  int num_workers_;
  int block_size_;
  const KnobRegistry& knobs_;
  std::unique_ptr<RoutingPolicy> policy_;
  IndexKind index_kind_;
  PrefixIndex index_;
  ChainIndex chain_;
  PrefixIndex::Match match_;
  bool phase_timing_ = false;
  PhaseTimes phase_times_;
  // The full match of `hashes` on the index in use.
  void fullMatch(std::span<const BlockHash> hashes, SessionId session, PrefixIndex::Match& out) const;
  std::uint64_t indexVersion() const { return index_kind_ == IndexKind::Chain ? chain_.version() : index_.version(); }
  bool session_state_ = true;
  SessionPrefixCache session_cache_;
  std::vector<SessionId> lost_exclusive_;  // scratch for PrefixIndex::stored
  std::vector<std::uint32_t> shared_at_;   // the same
  absl::flat_hash_map<SessionId, WorkerId> bindings_;
  std::vector<int> assigned_;
  std::vector<std::int64_t> assignments_;
  ActiveSequences active_;
  std::vector<std::int64_t> tree_blocks_;
  // Which request match_ was computed for, on which version of the index.
  struct MatchedRequest {
    RequestId request = 0;
    std::size_t blocks = 0;
    BlockHash last = 0;
    std::uint64_t version = ~std::uint64_t{0};
    bool operator==(const MatchedRequest&) const = default;
  };
  MatchedRequest matched_;
  PrefixIndex::Match track_match_;
  bool disaggregated_ = true;
  // cache_view proxy-lru (for a policy that reads the view): the proxy's LRU per worker, the cache
  // hits it gave the last decision, each worker's LRU capacity and the block stride in use.
  bool proxyView() const;
  ProxyBlockCache proxy_cache_;
  std::vector<std::int64_t> proxy_cached_;
  std::vector<std::size_t> proxy_capacity_;
  int proxy_stride_ = 0;
  std::uint64_t decisions_ = 0;
  SplitMix64 rng_;
};

}  // namespace kvscope
