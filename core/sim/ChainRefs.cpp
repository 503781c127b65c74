#include "core/sim/ChainRefs.h"

#include <cassert>

namespace kvscope {

std::size_t ChainRefs::residentPrefix(std::span<const BlockHash> hashes) const { return tree_.reach(hashes).depth; }

void ChainRefs::runsOf(std::span<const BlockHash> path, std::size_t from) {
  path_.clear();
  NodeId at = Tree::kRoot;
  std::size_t pos = 0;
  while (pos < path.size()) {
    NodeId c = tree_.child(at, path[pos]);
    assert(c != Tree::kNone && "ChainRefs: a chain's path is held");
    if (c == Tree::kNone) return;
    std::size_t len = tree_.node(c).size();
    if (pos < from && from < pos + len) {  // the span starts inside this run: cut it there
      tree_.split(c, from - pos, tree_.node(c).payload);
      continue;  // c now holds the part from `from` on
    }
    if (pos + len > path.size()) {  // a chain ends on a run boundary; keep it so
      c = tree_.split(c, path.size() - pos, tree_.node(c).payload);
      len = path.size() - pos;
    }
    if (pos >= from) path_.push_back(c);
    pos += len;
    at = c;
  }
}

std::size_t ChainRefs::add(std::span<const BlockHash> path, std::size_t from) {
  if (from >= path.size()) return 0;
  NodeId at = Tree::kRoot;
  std::size_t pos = 0;
  while (pos < path.size()) {
    const NodeId c = tree_.child(at, path[pos]);
    if (c == Tree::kNone) break;
    const std::size_t k = tree_.common(c, path, pos);
    if (pos < from && from < pos + k) {  // the new span starts inside this run: cut it there
      tree_.split(c, from - pos, tree_.node(c).payload);
      continue;
    }
    NodeId run = c;
    if (k < tree_.node(c).size()) run = tree_.split(c, k, tree_.node(c).payload);  // the path leaves (or ends in) it
    if (pos >= from) ++tree_.node(run).payload.refs;
    pos += k;
    at = run;
    if (run != c) break;  // the rest, if any, is new
  }
  if (pos >= path.size()) return 0;
  assert(pos >= from && "ChainRefs: a chain holds its path up to `from`");
  const auto rest = path.subspan(pos);
  const auto& leaf = tree_.node(at);
  // The chain's own run, one turn longer (a leaf only this chain holds, unlocked: the new blocks
  // carry the same counts).
  if (at != Tree::kRoot && leaf.children == 0 && leaf.payload.refs == 1 && leaf.payload.pins == 0)
    tree_.append(at, rest);
  else
    tree_.addChild(at, rest, Counts{1, 0});
  return rest.size();
}

std::size_t ChainRefs::drop(std::span<const BlockHash> path, std::size_t from) {
  if (from >= path.size()) return 0;
  runsOf(path, from);
  for (NodeId n : path_) --tree_.node(n).payload.refs;
  // Counts never grow towards the leaves, so the runs nobody holds now are the path's last ones.
  std::size_t freed = 0;
  for (auto it = path_.rbegin(); it != path_.rend() && tree_.node(*it).payload.refs == 0; ++it) {
    assert(tree_.node(*it).children == 0 && tree_.node(*it).payload.pins == 0);
    freed += tree_.node(*it).size();
    tree_.erase(*it);
  }
  return freed;
}

std::size_t ChainRefs::exclusiveTail(std::span<const BlockHash> path) const {
  NodeId at = Tree::kRoot;
  std::size_t pos = 0;
  while (pos < path.size()) {
    const NodeId c = tree_.child(at, path[pos]);
    if (c == Tree::kNone) return 0;
    if (tree_.node(c).payload.refs == 1) return path.size() - pos;
    pos += tree_.node(c).size();
    at = c;
  }
  return 0;
}

std::size_t ChainRefs::pin(std::span<const BlockHash> path, int sign) {
  runsOf(path, 0);
  std::size_t changed = 0;
  for (NodeId n : path_) {
    Counts& c = tree_.node(n).payload;
    if (sign > 0 && c.pins++ == 0) changed += tree_.node(n).size();
    if (sign < 0 && c.pins > 0 && --c.pins == 0) changed += tree_.node(n).size();
  }
  return changed;
}

}  // namespace kvscope
