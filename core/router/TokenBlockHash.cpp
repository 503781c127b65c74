#include "core/router/TokenBlockHash.h"

#include <array>
#include <bit>
#include <cstring>

#include <xxhash.h>

namespace kvscope {

static_assert(std::endian::native == std::endian::little, "token hashes are defined over little-endian bytes");

std::uint64_t localBlockHash(std::span<const std::uint32_t> tokens) {
  return XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), kTokenHashSeed);
}

BlockHash nextSequenceHash(BlockHash parent, std::uint64_t local) {
  const std::array<std::uint64_t, 2> pair{parent, local};
  return XXH3_64bits_withSeed(pair.data(), sizeof pair, kTokenHashSeed);
}

std::vector<BlockHash> tokenBlockHashes(std::span<const std::uint32_t> tokens, int block_size) {
  std::vector<BlockHash> out;
  if (block_size < 1) return out;
  const std::size_t stride = static_cast<std::size_t>(block_size);
  out.reserve(tokens.size() / stride);
  for (std::size_t at = 0; at + stride <= tokens.size(); at += stride) {
    const std::uint64_t local = localBlockHash(tokens.subspan(at, stride));
    out.push_back(out.empty() ? local : nextSequenceHash(out.back(), local));
  }
  return out;
}

}  // namespace kvscope
