#pragma once
// Sessions interned to dense 32-bit ordinals, so that a prefix index stores "who stored this first"
// in 4 bytes beside each block (or run). Ordinals are never reused: an index keeps an owner for as
// long as the block lives, and a stale ordinal must not name a new session.
#include <cstdint>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"
#include "core/model/TableBytes.h"

namespace kvscope {

class SessionOrdinals {
 public:
  // The top bit is the indexes' "shared" flag; kUnknown is a session never interned.
  static constexpr std::uint32_t kShared = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kUnknown = kShared - 1;

  std::uint32_t of(SessionId s) const {
    auto it = ordinals_.find(s);
    return it == ordinals_.end() ? kUnknown : it->second;
  }
  // The session's ordinal, new if need be; past two billion sessions, kShared (later ones count as shared).
  std::uint32_t intern(SessionId s) {
    auto [it, inserted] = ordinals_.try_emplace(s, static_cast<std::uint32_t>(sessions_.size()));
    if (inserted) {
      if (sessions_.size() >= kUnknown) {
        ordinals_.erase(it);
        return kShared;
      }
      sessions_.push_back(s);
    }
    return it->second;
  }
  std::size_t size() const { return sessions_.size(); }
  SessionId session(std::uint32_t ordinal) const { return sessions_[ordinal]; }
  std::size_t memoryBytes() const { return flatTableBytes(ordinals_) + sessions_.capacity() * sizeof(SessionId); }

 private:
  absl::flat_hash_map<SessionId, std::uint32_t> ordinals_;
  std::vector<SessionId> sessions_;  // ordinal -> session
};

}  // namespace kvscope
