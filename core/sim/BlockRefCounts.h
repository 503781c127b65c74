#pragma once
// How many of a pool's resident sessions reference each resident block. Almost every block is one
// session's own (its history past the shared boilerplate), so those are a plain set of hashes (8
// bytes a slot) and only blocks two or more sessions share (the boilerplate: a few hundred per
// pool) carry a count. A single map to a count would take 16 bytes a slot for all of them
// (ARCHITECTURE.md "The twin at scale": the pools' bytes per resident block).
#include <cstdint>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "core/model/Ids.h"
#include "core/model/TableBytes.h"

namespace kvscope {

class BlockRefCounts {
 public:
  // One more session references `h`; true when the block was not resident before.
  bool add(BlockHash h) {
    if (auto it = shared_.find(h); it != shared_.end()) {
      ++it->second;
      return false;
    }
    if (single_.erase(h) > 0) {
      shared_.emplace(h, 2);
      return false;
    }
    single_.insert(h);
    return true;
  }
  // One session fewer references `h`; true when that was the last one (the block leaves the pool).
  // A block that is not resident is left alone (false).
  bool drop(BlockHash h) {
    if (auto it = shared_.find(h); it != shared_.end()) {
      if (--it->second == 1) {
        shared_.erase(it);
        single_.insert(h);
      }
      return false;
    }
    return single_.erase(h) > 0;
  }
  // The shared table is small and hot, so it is asked first.
  bool contains(BlockHash h) const { return shared_.contains(h) || single_.contains(h); }
  std::int32_t refs(BlockHash h) const {
    if (auto it = shared_.find(h); it != shared_.end()) return it->second;
    return single_.contains(h) ? 1 : 0;
  }
  std::size_t size() const { return single_.size() + shared_.size(); }
  void clear() {
    single_.clear();
    shared_.clear();
  }
  std::size_t memoryBytes() const { return flatTableBytes(single_) + flatTableBytes(shared_); }

 private:
  absl::flat_hash_set<BlockHash> single_;                 // referenced by exactly one session
  absl::flat_hash_map<BlockHash, std::int32_t> shared_;   // by two or more: how many
};

}  // namespace kvscope
