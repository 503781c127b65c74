#pragma once
// How many leading block hashes two runs share: the compare behind every prefix match in the twin
// (a pool's chain against a prompt, a tree run against a path). Turns in a conversation mostly
// extend the last prompt, so the whole shorter run usually matches; memcmp settles 32 hashes a
// call with vector loads, where std::mismatch takes one hash a step, and only the 32 that hold the
// first difference are walked one by one.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

#include "core/model/Ids.h"

namespace kvscope {

inline std::size_t commonPrefix(std::span<const BlockHash> a, std::span<const BlockHash> b) {
  constexpr std::size_t kChunk = 32;
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i + kChunk <= n && std::memcmp(a.data() + i, b.data() + i, kChunk * sizeof(BlockHash)) == 0) i += kChunk;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace kvscope
