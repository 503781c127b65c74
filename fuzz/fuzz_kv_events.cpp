// libFuzzer target for the engines' KV event payloads (KvEventDecoder) and what they do to a
// worker's block set (KvBlockState): a payload is untrusted network input from any host that can
// reach the subscriber. A crash, a hang, a sanitizer report or a broken invariant is a finding.
//
// Invariants (promises of core/live/KvEventDecoder.h and KvBlockState.h):
//  - a decoded batch has no more events than kMaxElements, a stored event a positive block size;
//  - an error always says what is wrong (a non-empty message);
//  - applying a batch twice never grows the held blocks past the keys the batch stored, and
//    tokens = blocks x block size, never negative; every eviction frees a positive number of tokens.
#include <cstdint>
#include <string>

#include "core/live/KvBlockState.h"
#include "core/live/KvEventDecoder.h"
#include "fuzz/FuzzSupport.h"

using namespace kvscope;
using fuzz::finding;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string error;
  const auto batch = KvEventDecoder::decode(reinterpret_cast<const char*>(data), size, &error);
  if (!batch) {
    if (error.empty()) finding("a refused payload without a reason");
    return 0;
  }
  if (batch->events.size() > KvEventDecoder::kMaxElements) finding("more events than the limit");
  std::size_t stored_keys = 0;
  for (const auto& e : batch->events)
    if (const auto* s = std::get_if<KvBlockStored>(&e)) {
      if (s->block_size <= 0) finding("a stored event with a block size <= 0");
      stored_keys += s->blocks.size();
    }
  KvBlockState state(1);
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& out : state.apply(0, *batch)) {
      const auto* eviction = std::get_if<Eviction>(&out);
      if (!eviction || eviction->tokens_freed <= 0) finding("an eviction that frees nothing");
    }
    if (state.blocks(0) > stored_keys) finding("more blocks held than the batch stored");
    if (state.tokens(0) < 0) finding("negative tokens held");
  }
  return 0;
}
