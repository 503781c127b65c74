#include "core/sim/PrefixCeiling.h"

namespace kvscope {

std::int64_t PrefixCeiling::seenPrefix(const Set& seen, std::span<const BlockHash> hashes) {
  // The seen blocks of a chain form a prefix of it: bisect for its length.
  std::int64_t lo = 0, hi = static_cast<std::int64_t>(hashes.size());
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;  // is the prefix of length mid seen?
    if (seen.contains(hashes[static_cast<std::size_t>(mid - 1)]))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

void PrefixCeiling::insertFrom(Set& seen, std::span<const BlockHash> hashes, std::int64_t from) {
  for (std::size_t i = static_cast<std::size_t>(from); i < hashes.size(); ++i) seen.insert(hashes[i]);
}

PrefixCeiling::Hit PrefixCeiling::observe(SessionId session, std::span<const BlockHash> hashes) {
  Hit hit;
  hit.any_blocks = seenPrefix(any_, hashes);
  insertFrom(any_, hashes, hit.any_blocks);
  Set& own = sessions_[session];
  hit.intra_blocks = seenPrefix(own, hashes);
  insertFrom(own, hashes, hit.intra_blocks);
  return hit;
}

std::size_t PrefixCeiling::memoryBytes() const {
  std::size_t n = any_.capacity() * (sizeof(BlockHash) + 1);
  for (const auto& [s, set] : sessions_) n += sizeof(s) + sizeof(set) + set.capacity() * (sizeof(BlockHash) + 1);
  return n;
}

}  // namespace kvscope
