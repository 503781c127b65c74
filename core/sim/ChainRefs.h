#pragma once
// Which blocks a pool holds, as the chains of its resident sessions: a radix tree of block runs
// where each run counts the chains through it (refs) and the locked chains among them (pins). A
// block is resident while a chain runs through it, and pinned (not evictable) while a locked one
// does. A session's turn then costs a lookup per run on its path and an append of its new blocks,
// and a cut costs the runs it cuts, where a count per block cost a table entry per block.
//
// Every chain through a run also runs through its parent, so counts never grow from a run to its
// children: the blocks only one chain holds are its deepest ones, and a cut frees a chain's tail.
// A chain always ends on a run boundary (runs are split where a chain ends or leaves them), so a
// lock counts whole runs. Blocks are identified by their path, which for prefix-chained hashes
// is the same as by their hash (ARCHITECTURE.md "The twin at scale").
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/ChainTree.h"
#include "core/model/Ids.h"

namespace kvscope {

class ChainRefs {
 public:
  // How many leading blocks of `hashes` (any prompt) are resident.
  std::size_t residentPrefix(std::span<const BlockHash> hashes) const;

  // The calls below take a chain's whole path, of which the chain already holds path[..from).
  // One more chain holds path[from..]: returns the blocks that became resident.
  std::size_t add(std::span<const BlockHash> path, std::size_t from);
  // The chain no longer holds path[from..]: returns the blocks that left (the path's last ones).
  std::size_t drop(std::span<const BlockHash> path, std::size_t from);
  // How many of the path's last blocks this chain alone holds (what dropping them would free).
  std::size_t exclusiveTail(std::span<const BlockHash> path) const;
  // The chain is locked (sign +1) or unlocked (-1): returns the blocks that became pinned or
  // evictable (a block several locked chains hold is pinned once).
  std::size_t pin(std::span<const BlockHash> path, int sign);

  std::size_t blocks() const { return tree_.blockCount(); }
  std::size_t nodes() const { return tree_.nodeCount(); }
  void clear() { tree_ = Tree{}; }
  std::size_t memoryBytes() const { return tree_.memoryBytes() + path_.capacity() * sizeof(NodeId); }

 private:
  struct Counts {
    std::int32_t refs = 0;
    std::int32_t pins = 0;
  };
  using Tree = ChainTree<Counts>;
  using NodeId = Tree::NodeId;

  // The runs of a held path's blocks [from..), in path order, into path_; a run that straddles
  // `from` is split there first. Held paths need no compare: each run is found by its first block.
  void runsOf(std::span<const BlockHash> path, std::size_t from);

  Tree tree_;
  std::vector<NodeId> path_;  // scratch for runsOf
};

}  // namespace kvscope
