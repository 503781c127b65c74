#!/usr/bin/python3
"""Writes the KV event payloads test_kv_event_decoder reads, byte for byte as each engine's encoder
writes them. The engines encode msgspec Structs with msgspec.msgpack.Encoder(); msgspec is not in
Debian, so the same bytes are produced here with python3-msgpack under msgspec's rules, which are
msgpack's canonical ones: integers in their smallest form, Python floats as float64, str as str,
bytes as bin, lists as arrays, a Struct with array_like=True as an array (tag first when tag=True,
trailing fields equal to their default left out under omit_defaults=True) and without it as a map
({"type": tag} first, then the fields in declaration order, default-valued ones left out under
omit_defaults=True).

Each payload below names the upstream file and commit whose Struct definitions it follows:
  sglang-array-v0.msgpack     sgl-project/sglang python/sglang/srt/disaggregation/kv_events.py @ 006d053f182f9b488d2bd841afa06d5f9120a258
                              EventBatch[ts, events]; BlockStored[tag, hashes, parent, token_ids, block_size, lora_id]
  sglang-array-rank.msgpack   the same file @ 612d579090db24ec7c47cc5ca6b83e0c649b8c28: EventBatch gains attn_dp_rank
                              (set by publish(), so written), omit_defaults on
  vllm-array-medium.msgpack   vllm-project/vllm examples/online_serving/kv_events_subscriber.py @ 1ba882602e1dae8f334bf131cfe7fe19c19de2d3
                              (types copied from vllm.distributed.kv_events): array_like, BlockStored with medium,
                              BlockRemoved with medium; the batch as published with data_parallel_rank
  vllm-map-bytes.msgpack      vllm-project/vllm vllm/distributed/kv_events.py @ 0181ea3173e53eea8cf04a86891488e3dc89bb34
                              map form (no array_like), sha256 byte-string hashes (ExternalBlockHash = bytes | int),
                              lora_id, medium and lora_name always written, extra_keys and group_idx only when set
Run from this directory: ./make_fixtures.py (writes the .msgpack files beside it).
"""
import hashlib
import msgpack


def pack(obj):
    return msgpack.packb(obj, use_bin_type=True)


TS = 1767225600.25  # 2026-01-01 00:00:00.25 UTC
TOKENS = list(range(1000, 1032))  # two blocks of 16 tokens


def digest(label):
    return hashlib.sha256(label.encode()).digest()


fixtures = {
    # SGLang @ 006d053f: [ts, events]; lora_id None is written (no default on it).
    "sglang-array-v0.msgpack": [TS, [
        ["BlockStored", [101, 102], None, TOKENS, 16, None],
        ["BlockStored", [103], 102, TOKENS[:16], 16, None],
        ["BlockRemoved", [101]],
        ["AllBlocksCleared"],
    ]],
    # SGLang @ 612d5790: attn_dp_rank 1 appended; a negative Python hash as block hash.
    "sglang-array-rank.msgpack": [TS, [
        ["BlockStored", [-7, 9223372036854775807], None, TOKENS, 16, None],
        ["BlockRemoved", [-7]],
    ], 1],
    # vLLM array form with medium; an event kind this reader does not know follows.
    "vllm-array-medium.msgpack": [TS, [
        ["BlockStored", [501, 502], 500, TOKENS, 16, None, "GPU"],
        ["BlockRemoved", [501], "GPU"],
        ["BlockTransferred", [502], "CPU"],
    ], 0],
    # vLLM map form, byte-string hashes, one event with group_idx (hybrid models).
    "vllm-map-bytes.msgpack": {"ts": TS, "events": [
        {"type": "BlockStored", "block_hashes": [digest("b1"), digest("b2")], "parent_block_hash": None,
         "token_ids": TOKENS, "block_size": 16, "lora_id": None, "medium": "GPU", "lora_name": None},
        {"type": "BlockStored", "block_hashes": [digest("b3")], "parent_block_hash": digest("b2"),
         "token_ids": TOKENS[:16], "block_size": 16, "lora_id": None, "medium": "GPU", "lora_name": "adapter-a",
         "group_idx": 1},
        {"type": "BlockRemoved", "block_hashes": [digest("b1")], "medium": "GPU"},
        {"type": "AllBlocksCleared"},
    ], "data_parallel_rank": 2},
}

if __name__ == "__main__":
    for name, obj in fixtures.items():
        with open(name, "wb") as f:
            f.write(pack(obj))
        print(name, len(pack(obj)), "bytes")
