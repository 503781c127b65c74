#include "core/live/KvRouterAlignment.h"

#include <algorithm>
#include <span>
#include <variant>

#include <absl/container/flat_hash_set.h>

#include "core/router/TokenBlockHash.h"

namespace kvscope {

namespace {

bool gpuTier(const std::string& medium) { return medium.empty() || medium == "GPU" || medium == "gpu"; }

}  // namespace

KvRouterAlignment::Update KvRouterAlignment::apply(WorkerId worker, const KvEventBatch& batch) {
  Update out;
  Worker& w = workers_.at(static_cast<std::size_t>(worker));
  std::vector<std::uint32_t> tokens;
  // The caller removes first, then stores: a block stored and removed within this batch must not
  // come out stored, so its removal cancels its store instead.
  absl::flat_hash_set<BlockHash> fresh;
  const auto removeHash = [&](BlockHash h) {
    if (fresh.erase(h)) {
      out.stored.erase(std::find(out.stored.begin(), out.stored.end(), h));
      return;
    }
    out.removed.push_back(h);
  };
  for (const KvCacheEvent& event : batch.events) {
    if (const auto* s = std::get_if<KvBlockStored>(&event)) {
      if (!gpuTier(s->medium)) continue;
      const std::uint64_t n = s->blocks.size();
      if (s->block_size > 0) w.counts.last_block_size = s->block_size;
      if (!s->lora_name.empty()) {
        w.counts.lora += n;
        continue;
      }
      if (s->block_size != block_size_) {
        w.counts.other_size += n;
        continue;
      }
      if (s->token_ids.size() != n * static_cast<std::uint64_t>(block_size_)) {
        w.counts.no_tokens += n;
        continue;
      }
      BlockHash chain = 0;
      bool first = true;
      if (s->parent) {
        const auto p = w.hashes.find(*s->parent);
        if (p == w.hashes.end()) {
          w.counts.unknown_parent += n;
          continue;
        }
        chain = p->second;
        first = false;
      }
      // Token ids as u32, as Dynamo converts them (vLLM and SGLang send them as integers).
      tokens.assign(s->token_ids.begin(), s->token_ids.end());
      const std::span<const std::uint32_t> all(tokens);
      for (std::size_t i = 0; i < s->blocks.size(); ++i) {
        const std::uint64_t local = localBlockHash(
            all.subspan(i * static_cast<std::size_t>(block_size_), static_cast<std::size_t>(block_size_)));
        chain = first ? local : nextSequenceHash(chain, local);
        first = false;
        if (w.hashes.size() >= kMaxBlocks && !w.hashes.contains(s->blocks[i])) {
          ++w.counts.overflow;
          continue;
        }
        w.hashes[s->blocks[i]] = chain;
        if (fresh.insert(chain).second) out.stored.push_back(chain);
        ++w.counts.aligned;
      }
    } else if (const auto* r = std::get_if<KvBlockRemoved>(&event)) {
      if (!gpuTier(r->medium)) continue;
      for (const KvBlockKey k : r->blocks) {
        const auto it = w.hashes.find(k);
        if (it == w.hashes.end()) continue;  // never aligned (counted when stored)
        removeHash(it->second);
        w.hashes.erase(it);
      }
    } else {  // AllBlocksCleared
      for (const auto& [key, hash] : w.hashes) removeHash(hash);
      w.hashes = {};
    }
  }
  return out;
}

std::vector<BlockHash> KvRouterAlignment::forget(WorkerId worker) {
  Worker& w = workers_.at(static_cast<std::size_t>(worker));
  std::vector<BlockHash> out;
  out.reserve(w.hashes.size());
  for (const auto& [key, hash] : w.hashes) out.push_back(hash);
  w.hashes = {};
  return out;
}

}  // namespace kvscope
