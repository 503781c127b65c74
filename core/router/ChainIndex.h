#pragma once
// The router's prefix index kept per run of blocks (a ChainTree) instead of per block: what
// PrefixIndex answers - the leading blocks of a prompt each worker holds, how many of them are the
// session's own, where the first block only another session stored lies - from a walk that costs
// a lookup per node on the prompt's path (the shared boilerplate, then the session's own run) and a
// sequential compare, not a lookup per block. A turn's store costs its new blocks (the session's
// own run grows in place); a removal costs the run it cuts.
//
// It needs to know where a stored or removed span sits: events come as (path, from), the span
// path[from..] under the prefix path[..from) (KvEventListener::onChainStored). The twin's pools
// always know it; a real cluster's parentless spans go to PrefixIndex (LiveRouter).
//
// Same answers as PrefixIndex fed the same blocks whenever a block's hash names its prefix (every
// engine's and the simulator's hashes are chained); tests/core/test_chain_index.cpp checks it
// against PrefixIndex after every operation of random workloads.
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/ChainTree.h"
#include "core/router/HolderCodes.h"
#include "core/router/PrefixIndex.h"
#include "core/router/SessionOrdinals.h"

namespace kvscope {

class ChainIndex {
 public:
  using Match = PrefixIndex::Match;

  // `session` stored path[from..] on `worker`, under path[..from). Returns how many of those blocks
  // the worker newly holds (PrefixIndex::stored's count).
  std::size_t stored(WorkerId worker, SessionId session, std::span<const BlockHash> path, std::size_t from);
  // `worker` no longer holds path[from..]. Returns how many of them it held.
  std::size_t removed(WorkerId worker, std::span<const BlockHash> path, std::size_t from);
  // The same for blocks whose path is not known (a fallback that scans the tree: a bare block list
  // given to Router::onBlocksRemoved; the twin's pools always name the chain).
  std::size_t removedAnywhere(WorkerId worker, std::span<const BlockHash> hashes);
  void clearWorker(WorkerId worker);

  // PrefixIndex::match.
  void match(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& out) const;
  // Whether `worker` holds every block of `path`.
  bool holds(std::span<const BlockHash> path, WorkerId worker) const;

  // Changes with every store, removal or clear that changed a holder or an owner.
  std::uint64_t version() const { return version_; }
  std::size_t size() const { return tree_.blockCount(); }  // blocks some worker holds
  std::size_t nodes() const { return tree_.nodeCount(); }
  std::size_t memoryBytes() const { return tree_.memoryBytes() + holders_.memoryBytes() + ordinals_.memoryBytes(); }

 private:
  // Who holds the run (a HolderCodes code) and who stored it first: a session ordinal, kShared
  // set once another session stored it too, kFresh before anyone did (a prefix a store named
  // that the index had not seen).
  struct Run {
    std::uint32_t owner = kFresh;
    std::uint32_t holders = 0;
  };
  using Tree = ChainTree<Run>;
  using NodeId = Tree::NodeId;
  static constexpr std::uint32_t kShared = SessionOrdinals::kShared;
  static constexpr std::uint32_t kFresh = SessionOrdinals::kUnknown;

  // Cuts node n so that it ends after k blocks (when it is longer); returns the node covering them.
  NodeId cut(NodeId n, std::size_t k);
  // The rest of path (from pos on, none of it in the tree) under `at`.
  std::size_t grow(NodeId at, WorkerId worker, std::uint32_t me, std::span<const BlockHash> path, std::size_t pos,
                   std::size_t from);
  // After a change to the runs in touched_: erase runs no worker holds (when no run hangs below
  // them), and join runs that became alike again, so that nodes stay as few as the payloads need.
  void tidy();
  bool alike(NodeId a, NodeId b) const;
  void joinInto(NodeId n);

  Tree tree_;
  HolderCodes holders_;
  SessionOrdinals ordinals_;
  std::uint64_t version_ = 0;
  std::vector<NodeId> touched_;  // scratch: the nodes a store or removal changed, root to leaf
};

}  // namespace kvscope
