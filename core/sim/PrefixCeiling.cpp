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

PrefixCeiling::Hit PrefixCeiling::observe(SessionId session, std::span<const BlockHash> hashes, std::int64_t input_tokens,
                                          std::int64_t output_tokens) {
  const std::int64_t any_blocks = seenPrefix(any_, hashes);
  insertFrom(any_, hashes, any_blocks);
  Session& own = sessions_[session];
  const std::int64_t intra_blocks = seenPrefix(own.seen, hashes);
  insertFrom(own.seen, hashes, intra_blocks);
  std::int64_t intra = intra_blocks * block_size_;
  if (own.last_tokens > 0 && intra_blocks >= own.last_blocks) intra = std::max(intra, own.last_tokens);
  own.last_blocks = static_cast<std::int64_t>(hashes.size());
  own.last_tokens = input_tokens + output_tokens;
  Hit hit;
  hit.intra_tokens = std::min(input_tokens, intra);
  hit.any_tokens = std::min(input_tokens, std::max(any_blocks * block_size_, intra));
  return hit;
}

std::size_t PrefixCeiling::memoryBytes() const {
  std::size_t n = any_.capacity() * (sizeof(BlockHash) + 1);
  for (const auto& [s, own] : sessions_) n += sizeof(s) + sizeof(own) + own.seen.capacity() * (sizeof(BlockHash) + 1);
  return n;
}

}  // namespace kvscope
