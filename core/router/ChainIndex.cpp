#include "core/router/ChainIndex.h"

#include <algorithm>

#include <absl/container/flat_hash_set.h>

namespace kvscope {

namespace {
bool inRange(WorkerId w) { return w >= 0 && w < kMaxWorkers; }
}  // namespace

ChainIndex::NodeId ChainIndex::cut(NodeId n, std::size_t k) {
  if (k >= tree_.node(n).size()) return n;
  Run head = tree_.node(n).payload;
  head.holders = holders_.copy(head.holders);
  return tree_.split(n, k, head);
}

std::size_t ChainIndex::grow(NodeId at, WorkerId worker, std::uint32_t me, std::span<const BlockHash> path,
                             std::size_t pos, std::size_t from) {
  if (pos < from) {  // a prefix the index has not seen stored: nobody holds it
    at = tree_.addChild(at, path.subspan(pos, from - pos), Run{});
    pos = from;
  }
  const std::uint32_t mine = static_cast<std::uint32_t>(worker) + 1;  // the inline code of {worker}
  const auto& leaf = tree_.node(at);
  if (at != Tree::kRoot && leaf.children == 0 && leaf.payload.owner == me && leaf.payload.holders == mine) {
    tree_.append(at, path.subspan(pos));  // the session's own run on this worker, one turn longer
  } else {
    touched_.push_back(tree_.addChild(at, path.subspan(pos), Run{me, mine}));
  }
  return path.size() - pos;
}

std::size_t ChainIndex::stored(WorkerId worker, SessionId session, std::span<const BlockHash> path, std::size_t from) {
  if (!inRange(worker) || from >= path.size()) return 0;
  const std::uint32_t me = ordinals_.intern(session);
  touched_.clear();
  std::size_t added = 0, pos = 0;
  NodeId at = Tree::kRoot;
  while (pos < path.size()) {
    NodeId c = tree_.child(at, path[pos]);
    if (c == Tree::kNone) {
      added += grow(at, worker, me, path, pos, from);
      break;
    }
    std::size_t k = tree_.common(c, path, pos);
    if (pos < from && from < pos + k) {  // the stored span starts inside this run: cut it there
      at = cut(c, from - pos);
      pos = from;
      continue;
    }
    c = cut(c, k);  // ends where the path leaves the run, or ends
    if (pos >= from) {
      Run& r = tree_.node(c).payload;
      if (r.owner == kFresh)
        r.owner = me;
      else if (r.owner != me)
        r.owner |= kShared;
      if (holders_.add(r.holders, worker)) added += k;
      touched_.push_back(c);
    }
    at = c;
    pos += k;
  }
  tidy();
  ++version_;  // a holder or an owner may have changed
  return added;
}

std::size_t ChainIndex::removed(WorkerId worker, std::span<const BlockHash> path, std::size_t from) {
  if (!inRange(worker) || from >= path.size()) return 0;
  touched_.clear();
  std::size_t dropped = 0, pos = 0;
  NodeId at = Tree::kRoot;
  while (pos < path.size()) {
    NodeId c = tree_.child(at, path[pos]);
    if (c == Tree::kNone) break;
    std::size_t k = tree_.common(c, path, pos);
    const bool whole = k == tree_.node(c).size();
    if (pos < from) {
      if (from < pos + k) {  // the removed span starts inside this run: cut it there
        at = cut(c, from - pos);
        pos = from;
        continue;
      }
      if (!whole) break;  // the path leaves the tree before `from`
      at = c;
      pos += k;
      continue;
    }
    c = cut(c, k);
    if (holders_.remove(tree_.node(c).payload.holders, worker)) {
      dropped += k;
      touched_.push_back(c);
    }
    if (!whole) break;  // the path left the run, or ended, inside it
    at = c;
    pos += k;
  }
  if (dropped > 0) ++version_;
  tidy();
  return dropped;
}

std::size_t ChainIndex::removedAnywhere(WorkerId worker, std::span<const BlockHash> hashes) {
  if (!inRange(worker) || hashes.empty()) return 0;
  // Cut every run at the blocks named, then drop the worker from the cut pieces that are named.
  absl::flat_hash_set<BlockHash> named(hashes.begin(), hashes.end());
  std::vector<NodeId> nodes;
  tree_.forEachNode([&](NodeId n) {
    if (holders_.test(tree_.node(n).payload.holders, worker)) nodes.push_back(n);
  });
  std::size_t dropped = 0;
  for (NodeId n : nodes) {
    // Walk the run from its tail, cutting off pieces that are all named or all not.
    while (true) {
      const auto& b = tree_.node(n).blocks;
      const bool last_named = named.contains(b.back());
      std::size_t k = b.size();
      while (k > 0 && named.contains(b[k - 1]) == last_named) --k;
      NodeId piece = n;
      if (k > 0) {
        const NodeId head = cut(n, k);  // n keeps the tail piece
        piece = n;
        n = head;
      }
      if (last_named && holders_.remove(tree_.node(piece).payload.holders, worker)) {
        dropped += tree_.node(piece).size();
        touched_.clear();
        touched_.push_back(piece);
        tidy();
      }
      if (k == 0) break;
    }
  }
  if (dropped > 0) ++version_;
  return dropped;
}

void ChainIndex::clearWorker(WorkerId worker) {
  if (!inRange(worker)) return;
  std::vector<NodeId> emptied;
  tree_.forEachNode([&](NodeId n) {
    if (holders_.remove(tree_.node(n).payload.holders, worker) && tree_.node(n).payload.holders == 0)
      emptied.push_back(n);
  });
  // Leaves first: erasing a leaf can make its parent one.
  for (NodeId n : emptied) {
    while (n != Tree::kRoot && tree_.live(n) && tree_.node(n).children == 0 && tree_.node(n).payload.holders == 0) {
      const NodeId up = tree_.node(n).parent;
      tree_.erase(n);
      n = up;
    }
  }
  tree_.forEachNode([&](NodeId n) {
    if (tree_.node(n).payload.holders == 0) tree_.node(n).payload.owner = kFresh;  // as if it had left the index
  });
  ++version_;
}

bool ChainIndex::alike(NodeId a, NodeId b) const {
  const Run& x = tree_.node(a).payload;
  const Run& y = tree_.node(b).payload;
  return x.owner == y.owner && holders_.same(x.holders, y.holders);
}

void ChainIndex::joinInto(NodeId n) {
  holders_.release(tree_.node(tree_.node(n).parent).payload.holders);
  tree_.joinParent(n);
}

void ChainIndex::tidy() {
  // Runs no worker holds leave the index (PrefixIndex erases such a block, and forgets its owner);
  // one that still has runs below it (events out of order) stays, owned by nobody.
  for (std::size_t i = touched_.size(); i-- > 0;) {
    NodeId n = touched_[i];
    Run& r = tree_.node(n).payload;
    if (r.holders != 0) continue;
    r.owner = kFresh;
    if (tree_.node(n).children > 0) continue;
    touched_[i] = Tree::kNone;
    // Erasing a leaf can leave its parent a leaf nobody holds (a prefix never stored).
    while (n != Tree::kRoot && tree_.node(n).children == 0 && tree_.node(n).payload.holders == 0) {
      const NodeId up = tree_.node(n).parent;
      tree_.erase(n);
      n = up;
      if (i > 0 && touched_[i - 1] == n) break;  // the loop reaches it next
    }
  }
  // Runs that are alike again after the change, with nothing else hanging between them, are one run.
  NodeId last = Tree::kNone;
  for (NodeId n : touched_) {
    if (n == Tree::kNone) continue;
    const NodeId up = tree_.node(n).parent;
    if (up != Tree::kRoot && tree_.node(up).children == 1 && alike(up, n)) joinInto(n);
    last = n;
  }
  if (last != Tree::kNone) {
    const NodeId below = tree_.onlyChild(last);
    if (below != Tree::kNone && alike(last, below)) joinInto(below);
  }
}

void ChainIndex::match(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& out) const {
  const int n = std::clamp(num_workers, 0, kMaxWorkers);
  const int words = WorkerSet::wordsFor(n);
  const std::uint32_t me = ordinals_.of(session);
  HolderWalk walk = HolderWalk::fromAll(holders_, n);
  std::int32_t matched = 0, exclusive = 0;
  out.first_foreign = PrefixIndex::kNoForeign;
  auto settle = [&](const WorkerSet& dropped) { out.settle(dropped, matched, exclusive, words); };
  // A run's payload is the same for each of its blocks, so workers drop out only where a run
  // starts: one narrowing per node, and the counts grow by the run's matched length.
  std::size_t pos = 0;
  NodeId at = Tree::kRoot;
  while (pos < hashes.size() && walk.count > 0) {
    const NodeId c = tree_.child(at, hashes[pos]);
    const Run* r = c == Tree::kNone ? nullptr : &tree_.node(c).payload;
    walk.narrow(r != nullptr, r ? r->holders : 0, settle);
    if (walk.count == 0) return;
    if (r->owner != me && (r->owner & kShared) == 0 && out.first_foreign == PrefixIndex::kNoForeign)
      out.first_foreign = matched;
    const std::size_t k = tree_.common(c, hashes, pos);
    matched += static_cast<std::int32_t>(k);
    if (r->owner == me) exclusive += static_cast<std::int32_t>(k);
    if (k < tree_.node(c).size()) break;
    at = c;
    pos += k;
  }
  settle(walk.alive);
}

bool ChainIndex::holds(std::span<const BlockHash> path, WorkerId worker) const {
  if (!inRange(worker)) return false;
  std::size_t pos = 0;
  NodeId at = Tree::kRoot;
  while (pos < path.size()) {
    const NodeId c = tree_.child(at, path[pos]);
    if (c == Tree::kNone || !holders_.test(tree_.node(c).payload.holders, worker)) return false;
    const std::size_t k = tree_.common(c, path, pos);
    pos += k;
    if (k < tree_.node(c).size()) return pos == path.size();
    at = c;
  }
  return true;
}

}  // namespace kvscope
