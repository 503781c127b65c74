#pragma once
// A radix tree of block runs: each node holds a run of block hashes that always occur together on
// the paths the tree has seen, and a payload that is the same for every block of the run (which
// workers hold it, who stored it). A chain of blocks - a session's prompt - is a path from the root,
// so what a pool holds or an index knows costs a node per fork or change of payload, not an entry
// per block, and a walk along a prompt is a child lookup per node plus a sequential compare.
//
// Nodes are found by (parent, first hash of the run), so the tree never relies on hashes being
// prefix-chained: a block is identified by its path. split() keeps the node's id on the tail half,
// so the keys of its children and any id a caller holds for the end of a chain stay valid.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/CommonPrefix.h"
#include "core/model/Ids.h"
#include "core/model/TableBytes.h"

namespace kvscope {

template <typename Payload>
class ChainTree {
 public:
  using NodeId = std::uint32_t;
  static constexpr NodeId kRoot = 0;  // holds no blocks
  static constexpr NodeId kNone = ~NodeId{0};

  struct Node {
    NodeId parent = kNone;    // kNone: the root, or a free slot
    std::uint32_t start = 0;  // the depth of blocks[0] on its path
    std::uint32_t children = 0;
    NodeId child_xor = 0;  // the XOR of the children's ids: the only child's id when there is one
    std::vector<BlockHash> blocks;
    Payload payload{};
    std::size_t end() const { return start + blocks.size(); }
    std::size_t size() const { return blocks.size(); }
  };

  ChainTree() { nodes_.emplace_back(); }

  const Node& node(NodeId n) const { return nodes_[n]; }
  Node& node(NodeId n) { return nodes_[n]; }
  bool live(NodeId n) const { return n == kRoot || nodes_[n].parent != kNone; }
  NodeId onlyChild(NodeId n) const { return nodes_[n].children == 1 ? nodes_[n].child_xor : kNone; }

  NodeId child(NodeId parent, BlockHash first) const {
    auto it = children_.find(Key{parent, first});
    return it == children_.end() ? kNone : it->second;
  }
  // How many leading blocks of `n`'s run equal path[pos..] (at least 1 for a node child() found).
  std::size_t common(NodeId n, std::span<const BlockHash> path, std::size_t pos) const {
    return commonPrefix(nodes_[n].blocks, path.subspan(pos));
  }

  // How far `path` runs along the tree from the root: its first `depth` blocks are a path of the
  // tree, ending `within` blocks into `node` (all of it when the path went through it whole; the
  // root and 0 when not even the first block is there).
  struct Reach {
    NodeId node = kRoot;
    std::size_t within = 0;
    std::size_t depth = 0;
  };
  Reach reach(std::span<const BlockHash> path) const {
    Reach r;
    while (r.depth < path.size()) {
      const NodeId c = child(r.node, path[r.depth]);
      if (c == kNone) break;
      r.node = c;
      r.within = common(c, path, r.depth);
      r.depth += r.within;
      if (r.within < nodes_[c].size()) break;
    }
    return r;
  }

  NodeId addChild(NodeId parent, std::span<const BlockHash> blocks, Payload payload) {
    const NodeId n = allocate();
    Node& c = nodes_[n];
    c.parent = parent;
    c.start = static_cast<std::uint32_t>(nodes_[parent].end());
    c.blocks.assign(blocks.begin(), blocks.end());
    c.payload = payload;
    ++nodes_[parent].children;
    nodes_[parent].child_xor ^= n;
    children_.emplace(Key{parent, blocks.front()}, n);
    blocks_ += blocks.size();
    return n;
  }
  // Grows a leaf's run (its payload holds for the new blocks too).
  void append(NodeId leaf, std::span<const BlockHash> blocks) {
    auto& b = nodes_[leaf].blocks;
    b.insert(b.end(), blocks.begin(), blocks.end());
    blocks_ += blocks.size();
  }
  // Cuts `n` after its first k blocks (0 < k < size): a new node takes the head with `head_payload`
  // and becomes n's parent; n keeps the tail and its id. Returns the head.
  NodeId split(NodeId n, std::size_t k, Payload head_payload) {
    const NodeId h = allocate();  // may move nodes_: no references across it
    Node& head = nodes_[h];
    Node& tail = nodes_[n];
    head.parent = tail.parent;
    head.start = tail.start;
    head.children = 1;
    head.child_xor = n;
    nodes_[tail.parent].child_xor ^= n ^ h;
    head.blocks.assign(tail.blocks.begin(), tail.blocks.begin() + static_cast<std::ptrdiff_t>(k));
    head.payload = head_payload;
    children_[Key{head.parent, head.blocks.front()}] = h;
    tail.blocks.erase(tail.blocks.begin(), tail.blocks.begin() + static_cast<std::ptrdiff_t>(k));
    tail.parent = h;
    tail.start += static_cast<std::uint32_t>(k);
    children_.emplace(Key{h, tail.blocks.front()}, n);
    return h;
  }
  // Joins n's parent (not the root; n its only child) into n: n takes the parent's blocks in front,
  // and its place. The parent's payload is dropped (the caller releases what it owns first).
  void joinParent(NodeId n) {
    const NodeId p = nodes_[n].parent;
    Node& up = nodes_[p];
    Node& me = nodes_[n];
    children_.erase(Key{p, me.blocks.front()});
    up.blocks.insert(up.blocks.end(), me.blocks.begin(), me.blocks.end());
    me.blocks.swap(up.blocks);
    me.start = up.start;
    me.parent = up.parent;
    nodes_[me.parent].child_xor ^= p ^ n;
    children_[Key{me.parent, me.blocks.front()}] = n;
    free(p);
  }
  // Erases a leaf (not the root). The caller releases what its payload owns first.
  void erase(NodeId leaf) {
    Node& n = nodes_[leaf];
    children_.erase(Key{n.parent, n.blocks.front()});
    --nodes_[n.parent].children;
    nodes_[n.parent].child_xor ^= leaf;
    blocks_ -= n.blocks.size();
    free(leaf);
  }

  template <typename F>
  void forEachNode(F&& f) const {
    for (NodeId n = 1; n < nodes_.size(); ++n)
      if (nodes_[n].parent != kNone) f(n);
  }

  std::size_t nodeCount() const { return nodes_.size() - 1 - free_.size(); }
  std::size_t blockCount() const { return blocks_; }
  std::size_t memoryBytes() const {
    std::size_t bytes =
        nodes_.capacity() * sizeof(Node) + free_.capacity() * sizeof(NodeId) + flatTableBytes(children_);
    for (const Node& n : nodes_) bytes += n.blocks.capacity() * sizeof(BlockHash);
    return bytes;
  }

 private:
  struct Key {
    NodeId parent;
    BlockHash first;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.parent, k.first);
    }
  };

  NodeId allocate() {
    if (!free_.empty()) {
      const NodeId n = free_.back();
      free_.pop_back();
      return n;
    }
    nodes_.emplace_back();
    return static_cast<NodeId>(nodes_.size() - 1);
  }
  void free(NodeId n) {
    Node& x = nodes_[n];
    x.parent = kNone;
    x.children = 0;
    x.child_xor = 0;
    std::vector<BlockHash>().swap(x.blocks);  // a free slot keeps no memory
    x.payload = Payload{};
    free_.push_back(n);
  }

  std::vector<Node> nodes_;  // [0] is the root
  std::vector<NodeId> free_;
  absl::flat_hash_map<Key, NodeId> children_;
  std::size_t blocks_ = 0;
};

}  // namespace kvscope
