#include "core/live/KvBlockState.h"

namespace kvscope {

namespace {
bool gpuTier(const std::string& medium) { return medium.empty() || medium == "GPU"; }
}  // namespace

std::int64_t KvBlockState::tokens(WorkerId worker) const {
  const Worker& w = at(worker);
  return static_cast<std::int64_t>(w.blocks.size()) * w.block_size;
}

std::size_t KvBlockState::chainLength(WorkerId worker, KvBlockKey key) const {
  const Worker& w = at(worker);
  std::size_t n = 0;
  for (auto it = w.blocks.find(key); it != w.blocks.end() && n <= w.blocks.size(); it = w.blocks.find(it->second)) {
    ++n;
    if (it->second == kNoParent) break;
  }
  return n;
}

std::vector<EventPayload> KvBlockState::apply(WorkerId worker, const KvEventBatch& batch) {
  Worker& w = at(worker);
  std::vector<EventPayload> out;
  for (const KvCacheEvent& event : batch.events) {
    if (const auto* s = std::get_if<KvBlockStored>(&event)) {
      if (!gpuTier(s->medium)) {
        w.counts.other_tiers += s->blocks.size();
        continue;
      }
      w.block_size = s->block_size;
      KvBlockKey parent = s->parent.value_or(kNoParent);
      for (const KvBlockKey key : s->blocks) {
        if (w.blocks.size() >= kMaxBlocks && !w.blocks.contains(key)) {
          ++w.counts.overflow;
        } else {
          w.blocks[key] = parent;
          ++w.counts.stored;
        }
        parent = key;
      }
    } else if (const auto* r = std::get_if<KvBlockRemoved>(&event)) {
      if (!gpuTier(r->medium)) {
        w.counts.other_tiers += r->blocks.size();
        continue;
      }
      std::int64_t freed = 0;
      for (const KvBlockKey key : r->blocks) {
        if (w.blocks.erase(key)) {
          ++w.counts.removed;
          ++freed;
        } else {
          ++w.counts.unknown_removed;
        }
      }
      if (freed > 0) out.push_back(Eviction{worker, 0, freed * w.block_size, EvictionGranularity::Block, 0});
    } else {
      const auto held = static_cast<std::int64_t>(w.blocks.size());
      ++w.counts.cleared;
      w.counts.removed += static_cast<std::uint64_t>(held);
      w.blocks = {};  // the memory back too, not just the entries
      if (held > 0) out.push_back(Eviction{worker, 0, held * w.block_size, EvictionGranularity::Block, 0});
    }
  }
  return out;
}

}  // namespace kvscope
