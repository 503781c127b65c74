#include "core/trace/BlockChain.h"

#include <algorithm>

namespace kvscope {

void expandBlockHashes(const PromptLayout& p, int block_size, std::vector<BlockHash>& out) {
  // Block j ends at token (j+1)*B; the rules below (shared prefix, then the trace block that holds
  // its last token, then the request's own tokens) each cover a contiguous range of j, so each runs
  // as a loop of its own: this is a pass over every prompt block of every turn, the twin's hottest.
  const auto n = static_cast<std::size_t>(std::max(0, fullBlocks(p.input_tokens, block_size)));
  out.resize(n);
  BlockHash* h = out.data();
  const std::int64_t b = block_size;
  std::size_t j = std::min(n, static_cast<std::size_t>(std::max<std::int64_t>(0, p.shared_prefix_tokens / b)));
  for (std::size_t i = 0; i < j; ++i) h[i] = mixHash(p.shared_scope, i);
  if (p.source_block_size <= 0) {
    for (; j < n; ++j) h[j] = mixHash(p.session_scope, j);
    return;
  }
  std::size_t k = p.source_hashes.size();  // the trace block whose scope is cached in `scope`
  std::uint64_t scope = 0;
  for (; j < n; ++j) {
    const auto at = static_cast<std::size_t>(((static_cast<std::int64_t>(j) + 1) * b - 1) / p.source_block_size);
    if (at >= p.source_hashes.size()) break;  // past the trace's hashes, and so is every later block
    if (at != k) {
      k = at;
      scope = mixHash(p.session_scope, p.source_hashes[k]);
    }
    h[j] = mixHash(scope, j);
  }
  for (; j < n; ++j) h[j] = mixHash(p.unique_scope, j);
}

}  // namespace kvscope
