#pragma once
// Decodes the msgpack payload of one KV event message (the third frame of [topic, seq, payload]) in
// every form the engines in use write (msgspec structs with tag=True):
//   - array form (array_like=True: SGLang; vLLM until it moved to maps): the batch
//     [ts, events, dp_rank?], each event [tag, field, field, ...] with trailing default fields
//     omitted (omit_defaults) and newer fields appended: vLLM's BlockStored carries medium,
//     lora_name, extra_keys, group_idx, ...; SGLang's older one stops at lora_id, its newer one
//     appends medium and, with typed metadata, a metadata struct;
//   - map form (newer vLLM): {"ts", "events", "data_parallel_rank"}, each event
//     {"type": tag, field: value, ...}, default fields omitted.
// Fields this reader does not know are skipped, so a newer engine that appends one still reads;
// an event of an unknown kind is skipped and named in the batch. A payload that is not a batch
// (bad msgpack, a wrong type in a known field) is an error naming the field, never a crash; sizes
// are bounded before anything is allocated for them.
#include <cstddef>
#include <optional>
#include <string>

#include "core/live/KvEventBatch.h"

namespace kvscope {

class KvEventDecoder {
 public:
  // At most this many elements in one array (block hashes, token ids, events) and bytes in one
  // payload: far above a real batch (a 1M-token prompt is 62,500 blocks of 16), below a memory blow-up.
  static constexpr std::size_t kMaxElements = 1u << 22;
  static constexpr std::size_t kMaxPayloadBytes = 64u << 20;

  // The batch, or nullopt with `error` ("events[2] (BlockStored): block_size: expected an integer, got str").
  static std::optional<KvEventBatch> decode(const char* data, std::size_t size, std::string* error);
};

}  // namespace kvscope
