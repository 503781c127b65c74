#include "core/trace/BlockChain.h"

namespace kvscope {

void expandBlockHashes(const PromptLayout& p, int block_size, std::vector<BlockHash>& out) {
  out.clear();
  const int n = fullBlocks(p.input_tokens, block_size);
  out.reserve(static_cast<std::size_t>(n));
  const std::int64_t b = block_size;
  for (int j = 0; j < n; ++j) {
    const std::int64_t end = (j + 1) * b;  // one past the block's last token
    const auto pos = static_cast<std::uint64_t>(j);
    if (end <= p.shared_prefix_tokens) {
      out.push_back(mixHash(p.shared_scope, pos));
    } else if (p.source_block_size > 0) {
      const auto k = static_cast<std::size_t>((end - 1) / p.source_block_size);
      if (k < p.source_hashes.size())
        out.push_back(mixHash(mixHash(p.session_scope, p.source_hashes[k]), pos));
      else
        out.push_back(mixHash(p.unique_scope, pos));
    } else {
      out.push_back(mixHash(p.session_scope, pos));
    }
  }
}

}  // namespace kvscope
