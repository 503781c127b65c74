#include "core/router/ProxyBlockCache.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

int ProxyBlockCache::stride(int proxy_block_tokens, int block_size) {
  if (block_size <= 0) return 1;
  return std::max(1, static_cast<int>(std::lround(static_cast<double>(proxy_block_tokens) / block_size)));
}

std::int64_t ProxyBlockCache::proxyBlockTokens(int proxy_block_tokens, int block_size) {
  return static_cast<std::int64_t>(stride(proxy_block_tokens, block_size)) * std::max(1, block_size);
}

void ProxyBlockCache::unlink(Lru& lru, std::uint32_t n) {
  Node& node = lru.nodes[n];
  if (node.prev != kNone)
    lru.nodes[node.prev].next = node.next;
  else
    lru.oldest = node.next;
  if (node.next != kNone)
    lru.nodes[node.next].prev = node.prev;
  else
    lru.newest = node.prev;
  node.prev = node.next = kNone;
}

void ProxyBlockCache::pushNewest(Lru& lru, std::uint32_t n) {
  Node& node = lru.nodes[n];
  node.prev = lru.newest;
  node.next = kNone;
  if (lru.newest != kNone) lru.nodes[lru.newest].next = n;
  lru.newest = n;
  if (lru.oldest == kNone) lru.oldest = n;
}

std::int64_t ProxyBlockCache::prefixHit(WorkerId worker, std::span<const BlockHash> hashes, int stride) {
  if (worker < 0 || static_cast<std::size_t>(worker) >= workers_.size() || stride < 1) return 0;
  Lru& lru = workers_[static_cast<std::size_t>(worker)];
  if (lru.where.empty()) return 0;
  std::int64_t hit = 0;
  for (std::size_t i = static_cast<std::size_t>(stride) - 1; i < hashes.size(); i += static_cast<std::size_t>(stride)) {
    const auto it = lru.where.find(hashes[i]);
    if (it == lru.where.end()) break;
    unlink(lru, it->second);
    pushNewest(lru, it->second);
    ++hit;
  }
  return hit;
}

void ProxyBlockCache::insert(WorkerId worker, std::span<const BlockHash> hashes, int stride, std::size_t capacity) {
  if (worker < 0 || static_cast<std::size_t>(worker) >= workers_.size() || stride < 1 || capacity == 0) return;
  Lru& lru = workers_[static_cast<std::size_t>(worker)];
  for (std::size_t i = static_cast<std::size_t>(stride) - 1; i < hashes.size(); i += static_cast<std::size_t>(stride)) {
    auto [it, inserted] = lru.where.try_emplace(hashes[i], kNone);
    if (!inserted) {
      unlink(lru, it->second);
      pushNewest(lru, it->second);
      continue;
    }
    std::uint32_t n;
    if (!lru.free.empty()) {
      n = lru.free.back();
      lru.free.pop_back();
    } else {
      n = static_cast<std::uint32_t>(lru.nodes.size());
      lru.nodes.emplace_back();
    }
    lru.nodes[n].hash = hashes[i];
    it->second = n;
    pushNewest(lru, n);
  }
  while (lru.where.size() > capacity && lru.oldest != kNone) {
    const std::uint32_t victim = lru.oldest;
    unlink(lru, victim);
    lru.where.erase(lru.nodes[victim].hash);
    lru.free.push_back(victim);
  }
}

void ProxyBlockCache::clear() {
  for (Lru& lru : workers_) lru = Lru{};
}

}  // namespace kvscope
