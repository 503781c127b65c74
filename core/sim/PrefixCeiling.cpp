#include "core/sim/PrefixCeiling.h"

namespace kvscope {

std::int64_t PrefixCeiling::see(Paths& seen, std::span<const BlockHash> hashes) {
  const Paths::Reach r = seen.reach(hashes);
  const auto matched = static_cast<std::int64_t>(r.depth);
  if (r.depth == hashes.size()) return matched;
  const std::size_t pos = r.depth;
  Paths::NodeId at = r.node;
  if (at != Paths::kRoot && r.within < seen.node(at).size())
    at = seen.split(at, r.within, Seen{});  // it leaves the run inside
  if (at != Paths::kRoot && seen.node(at).children == 0)
    seen.append(at, hashes.subspan(pos));  // the session's last prompt, one turn longer
  else
    seen.addChild(at, hashes.subspan(pos), Seen{});
  return matched;
}

PrefixCeiling::Hit PrefixCeiling::observe(SessionId session, std::span<const BlockHash> hashes,
                                          std::int64_t input_tokens, std::int64_t output_tokens) {
  const std::int64_t any_blocks = see(any_, hashes);
  Session& own = sessions_[session];
  const std::int64_t intra_blocks = see(own.seen, hashes);
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
  std::size_t n = any_.memoryBytes();
  for (const auto& [s, own] : sessions_) n += sizeof(s) + sizeof(own) + own.seen.memoryBytes();
  return n;
}

}  // namespace kvscope
