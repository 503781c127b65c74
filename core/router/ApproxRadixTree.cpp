#include "core/router/ApproxRadixTree.h"

#include <algorithm>
#include <queue>
#include <tuple>

#include "core/model/CommonPrefix.h"

namespace kvscope {

ApproxRadixTree::ApproxRadixTree(int num_tenants) : nodes_(1), sizes_(static_cast<std::size_t>(num_tenants), 0) {
  // init_workers inserts "" for every worker: each is a tenant of the root from the start.
  for (WorkerId t = 0; t < num_tenants; ++t) nodes_[0].tenants.push_back({t, 0});
}

std::uint64_t* ApproxRadixTree::accessOf(Node& n, WorkerId t) {
  for (auto& [tenant, at] : n.tenants)
    if (tenant == t) return &at;
  return nullptr;
}

std::uint32_t ApproxRadixTree::allocate() {
  if (free_.empty()) {
    nodes_.emplace_back();
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  const std::uint32_t n = free_.back();
  free_.pop_back();
  nodes_[n] = Node{};
  return n;
}

// `freed` is free_ except during eviction, whose heap still names nodes: ids are not reused there.
void ApproxRadixTree::release(std::uint32_t n, std::vector<std::uint32_t>& freed) {
  nodes_[nodes_[n].parent].children.erase(nodes_[n].elems.front());
  nodes_[n] = Node{};
  freed.push_back(n);
}

// Cuts run n before element `at`: a new head node takes elements [0, at), n keeps the tail with its
// id and children, so nothing below it (nor an eviction heap entry naming it) has to change.
std::uint32_t ApproxRadixTree::split(std::uint32_t n, std::size_t at) {
  const std::uint32_t h = allocate();  // may reallocate nodes_: no references held across it
  Node& head = nodes_[h];
  Node& tail = nodes_[n];
  head.parent = tail.parent;
  head.tenants = tail.tenants;
  head.elems.assign(tail.elems.begin(), tail.elems.begin() + static_cast<std::ptrdiff_t>(at));
  tail.elems.erase(tail.elems.begin(), tail.elems.begin() + static_cast<std::ptrdiff_t>(at));
  tail.parent = h;
  head.children.emplace(tail.elems.front(), n);
  nodes_[head.parent].children[head.elems.front()] = h;
  return h;
}

// A node whose only child has the same tenants and times is one run cut in two: join them.
bool ApproxRadixTree::absorbable(std::uint32_t n) const {
  if (!alive(n) || nodes_[n].children.size() != 1) return false;
  return nodes_[n].tenants == nodes_[nodes_[n].children.begin()->second].tenants;
}

void ApproxRadixTree::absorbOnlyChild(std::uint32_t n) {
  const std::uint32_t c = nodes_[n].children.begin()->second;
  Node& up = nodes_[n];
  Node& down = nodes_[c];
  up.elems.insert(up.elems.end(), down.elems.begin(), down.elems.end());
  up.children = std::move(down.children);
  for (const auto& [first, g] : up.children) nodes_[g].parent = n;
  nodes_[c] = Node{};
  free_.push_back(c);
}

void ApproxRadixTree::remerge(std::uint32_t n) {
  if (!alive(n)) return;
  while (absorbable(nodes_[n].parent)) {
    const std::uint32_t p = nodes_[n].parent;
    absorbOnlyChild(p);
    n = p;
  }
  while (absorbable(n)) absorbOnlyChild(n);
}

// Every element of run n gets tenant t at `now` (t's size grows by the run if t is new there).
void ApproxRadixTree::touch(std::uint32_t n, WorkerId t, std::uint64_t now) {
  if (auto* at = accessOf(nodes_[n], t)) {
    *at = now;
    return;
  }
  nodes_[n].tenants.push_back({t, now});
  sizes_[static_cast<std::size_t>(t)] += static_cast<std::int64_t>(nodes_[n].elems.size());
}

void ApproxRadixTree::insert(std::span<const BlockHash> seq, WorkerId tenant, std::uint64_t now) {
  if (tenant < 0 || static_cast<std::size_t>(tenant) >= sizes_.size()) return;
  if (auto* at = accessOf(nodes_[0], tenant)) *at = now;
  std::uint32_t cur = 0;  // the path so far ends with the last element of run `cur`
  std::size_t pos = 0;
  while (pos < seq.size()) {
    const auto it = nodes_[cur].children.find(seq[pos]);
    if (it == nodes_[cur].children.end()) {
      Node& c = nodes_[cur];
      if (cur != 0 && c.children.empty() && c.tenants.size() == 1 && c.tenants.front() == std::pair{tenant, now}) {
        // The new elements would carry exactly cur's tenants: a turn extending its own leaf grows it.
        c.elems.insert(c.elems.end(), seq.begin() + static_cast<std::ptrdiff_t>(pos), seq.end());
      } else {
        const std::uint32_t n = allocate();
        nodes_[n].parent = cur;
        nodes_[n].elems.assign(seq.begin() + static_cast<std::ptrdiff_t>(pos), seq.end());
        nodes_[n].tenants.push_back({tenant, now});
        nodes_[cur].children.emplace(seq[pos], n);
      }
      sizes_[static_cast<std::size_t>(tenant)] += static_cast<std::int64_t>(seq.size() - pos);
      return;
    }
    std::uint32_t next = it->second;
    const std::size_t shared = commonPrefix(nodes_[next].elems, seq.subspan(pos));
    if (shared < nodes_[next].elems.size()) {
      // The path ends or turns inside the run: only its head gets the tenant. Ending where the run
      // already has the tenant at `now` changes nothing, so the run stays whole.
      if (pos + shared == seq.size()) {
        const auto* at = accessOf(nodes_[next], tenant);
        if (at && *at == now) return;
      }
      next = split(next, shared);
    }
    touch(next, tenant, now);
    pos += shared;
    // Refreshing a whole path can make a run alike its parent again (they split when they diverged).
    if (absorbable(cur)) {
      absorbOnlyChild(cur);
      next = cur;
    }
    cur = next;
  }
}

ApproxRadixTree::Match ApproxRadixTree::prefixMatch(std::span<const BlockHash> seq, std::uint64_t now) {
  Match m;
  m.per_tenant.assign(sizes_.size(), 0);
  std::uint32_t cur = 0;  // the run whose last element is the last element reached
  std::size_t pos = 0;
  while (pos < seq.size()) {
    const auto it = nodes_[cur].children.find(seq[pos]);
    if (it == nodes_[cur].children.end()) break;
    std::uint32_t next = it->second;
    const std::size_t shared = commonPrefix(nodes_[next].elems, seq.subspan(pos));
    pos += shared;
    for (const auto& [t, at] : nodes_[next].tenants)
      m.per_tenant[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(pos);
    if (shared < nodes_[next].elems.size()) {
      // The match ends inside the run: the refresh below stops at the match point, so split there
      // unless the chosen tenant (the run's first) is already at `now`, which leaves the run alike.
      const Tenants& ts = nodes_[next].tenants;
      if (!ts.empty() && ts.front().second != now) next = split(next, shared);
      cur = next;
      break;
    }
    cur = next;
  }
  m.matched = static_cast<std::int64_t>(pos);
  if (nodes_[cur].tenants.empty()) return m;  // "empty"
  m.tenant = nodes_[cur].tenants.front().first;
  // Refresh the chosen tenant's access time from the node to the root.
  for (std::uint32_t n = cur;; n = nodes_[n].parent) {
    if (auto* at = accessOf(nodes_[n], m.tenant)) *at = now;
    if (n == 0) break;
  }
  return m;
}

WorkerId ApproxRadixTree::smallestTenant() const {
  WorkerId best = kNoWorker;
  for (WorkerId t = 0; t < static_cast<WorkerId>(sizes_.size()); ++t)
    if (best == kNoWorker || sizes_[static_cast<std::size_t>(t)] < sizes_[static_cast<std::size_t>(best)]) best = t;
  return best;
}

void ApproxRadixTree::evictTenantBySize(std::int64_t max_size) {
  // tree.rs: every (node, tenant) where the node is a leaf for that tenant, oldest access first;
  // a tenant over max_size loses the node, and the parent becomes a candidate if it is now a leaf.
  // Per element, a leaf run loses its elements from the tail one by one, each then the tenant's
  // oldest leaf (same access, and no other leaf of the tenant shares it): so the run goes at once,
  // or only its tail when that is all the tenant is over by.
  using Entry = std::tuple<std::uint64_t, WorkerId, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> pq;
  const auto isLeafFor = [&](std::uint32_t n, WorkerId t) {
    if (!accessOf(nodes_[n], t)) return false;
    for (const auto& [first, child] : nodes_[n].children)
      if (accessOf(nodes_[child], t)) return false;
    return true;
  };
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t n = stack.back();
    stack.pop_back();
    for (const auto& [first, child] : nodes_[n].children) stack.push_back(child);
    if (n == 0) continue;
    for (const auto& [t, at] : nodes_[n].tenants)
      if (isLeafFor(n, t)) pq.push({at, t, n});
  }
  std::vector<std::uint32_t> freed, touched;
  while (!pq.empty()) {
    const auto [at, t, n] = pq.top();
    pq.pop();
    auto& size = sizes_[static_cast<std::size_t>(t)];
    if (size <= max_size) continue;
    if (!accessOf(nodes_[n], t)) continue;
    const auto excess = static_cast<std::size_t>(size - max_size);
    if (excess < nodes_[n].elems.size()) {
      if (nodes_[n].tenants.size() == 1) {
        // t's alone (so childless): its last `excess` elements are freed, the rest stays a leaf.
        nodes_[n].elems.resize(nodes_[n].elems.size() - excess);
        size = max_size;
        continue;
      }
      split(n, nodes_[n].elems.size() - excess);  // n is now the tail, the part t loses
    }
    auto& tenants = nodes_[n].tenants;
    tenants.erase(std::find_if(tenants.begin(), tenants.end(), [&](const auto& e) { return e.first == t; }));
    size -= static_cast<std::int64_t>(nodes_[n].elems.size());
    const std::uint32_t parent = nodes_[n].parent;
    touched.push_back(parent);
    if (tenants.empty())
      release(n, freed);  // no tenant left means no child either: children's tenants are a subset
    else
      touched.push_back(n);
    if (parent != 0 && isLeafFor(parent, t)) pq.push({*accessOf(nodes_[parent], t), t, parent});
  }
  free_.insert(free_.end(), freed.begin(), freed.end());
  // A run that lost a tenant, or a parent that lost a branch, may be alike its neighbour now.
  for (const std::uint32_t n : touched) remerge(n);
}

}  // namespace kvscope
