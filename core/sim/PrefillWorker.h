#pragma once
// A prefill worker: a FIFO prefill server (chunked prefill runs one long prompt after another) with
// its own prefix cache, so shared prefixes are computed once.
#include <cstdint>

#include "core/sim/KvPool.h"

namespace kvscope {

struct PrefillWorker {
  PrefillWorker(std::int32_t p, std::int64_t capacity, int block_size)
      : id(p), pool(p, capacity, block_size, EvictionGranularity::Block, nullptr) {}
  std::int32_t id;
  KvPool pool;  // P's own prefix cache (radix LRU)
  SimTime busy_until = 0;
};

}  // namespace kvscope
