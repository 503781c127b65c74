#include "core/live/KvEventDecoder.h"

#include <msgpack.hpp>

#include <stdexcept>

namespace kvscope {

namespace {

// Thrown inside the decoder with the path to the field; caught once at the top.
struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* typeName(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL:
      return "nil";
    case msgpack::type::BOOLEAN:
      return "bool";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
      return "int";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return "float";
    case msgpack::type::STR:
      return "str";
    case msgpack::type::BIN:
      return "bin";
    case msgpack::type::ARRAY:
      return "array";
    case msgpack::type::MAP:
      return "map";
    case msgpack::type::EXT:
      return "ext";
  }
  return "unknown";
}

[[noreturn]] void expected(const std::string& where, const char* what, const msgpack::object& got) {
  throw Bad(where + ": expected " + what + ", got " + typeName(got));
}

std::int64_t integer(const msgpack::object& o, const std::string& where) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) {
    if (o.via.u64 > static_cast<std::uint64_t>(INT64_MAX))
      throw Bad(where + ": " + std::to_string(o.via.u64) + " is out of range");
    return static_cast<std::int64_t>(o.via.u64);
  }
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return o.via.i64;
  expected(where, "an integer", o);
}

double number(const msgpack::object& o, const std::string& where) {
  if (o.type == msgpack::type::FLOAT64 || o.type == msgpack::type::FLOAT32) return o.via.f64;
  if (o.type == msgpack::type::POSITIVE_INTEGER) return static_cast<double>(o.via.u64);
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return static_cast<double>(o.via.i64);
  expected(where, "a number", o);
}

std::string text(const msgpack::object& o, const std::string& where) {
  if (o.type == msgpack::type::NIL) return {};
  if (o.type != msgpack::type::STR) expected(where, "a string", o);
  return std::string(o.via.str.ptr, o.via.str.size);
}

std::optional<std::int64_t> optionalInteger(const msgpack::object& o, const std::string& where) {
  if (o.type == msgpack::type::NIL) return std::nullopt;
  return integer(o, where);
}

KvBlockKey blockKey(const msgpack::object& o, const std::string& where) {
  switch (o.type) {
    case msgpack::type::POSITIVE_INTEGER:
      return o.via.u64;
    case msgpack::type::NEGATIVE_INTEGER:
      return static_cast<KvBlockKey>(o.via.i64);
    case msgpack::type::BIN: {
      if (o.via.bin.size == 0) throw Bad(where + ": an empty byte-string hash");
      KvBlockKey k = 0;
      for (std::uint32_t i = 0; i < 8; ++i)
        k = (k << 8) | (i < o.via.bin.size ? static_cast<unsigned char>(o.via.bin.ptr[i]) : 0u);
      return k;
    }
    default:
      expected(where, "a block hash (int or bytes)", o);
  }
}

const msgpack::object_array& array(const msgpack::object& o, const std::string& where) {
  if (o.type != msgpack::type::ARRAY) expected(where, "an array", o);
  return o.via.array;
}

std::vector<KvBlockKey> blockKeys(const msgpack::object& o, const std::string& where) {
  const auto& a = array(o, where);
  std::vector<KvBlockKey> out;
  out.reserve(a.size);
  for (std::uint32_t i = 0; i < a.size; ++i) out.push_back(blockKey(a.ptr[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

std::vector<std::int64_t> tokenIds(const msgpack::object& o, const std::string& where) {
  if (o.type == msgpack::type::NIL) return {};
  const auto& a = array(o, where);
  std::vector<std::int64_t> out;
  out.reserve(a.size);
  for (std::uint32_t i = 0; i < a.size; ++i) out.push_back(integer(a.ptr[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

// An event's fields by name, whichever form it came in: the array form's positions are named by
// the kind's field order (`names`), extra trailing positions are ignored.
struct Fields {
  std::vector<std::pair<std::string, const msgpack::object*>> named;
  const msgpack::object* get(const std::string& name) const {
    for (const auto& [n, o] : named)
      if (n == name) return o;
    return nullptr;
  }
};

// Field order of each kind in the array form, as the engines' structs declare them (vLLM's
// BlockStored: the SGLang one is its prefix; SGLang's metadata extension sits where vLLM has
// lora_name and is told apart by its type).
const std::vector<std::string>& fieldOrder(const std::string& kind) {
  static const std::vector<std::string> stored{"block_hashes",
                                               "parent_block_hash",
                                               "token_ids",
                                               "block_size",
                                               "lora_id",
                                               "medium",
                                               "lora_name",
                                               "extra_keys",
                                               "group_idx",
                                               "kv_cache_spec_kind",
                                               "kv_cache_spec_sliding_window"};
  static const std::vector<std::string> removed{"block_hashes", "medium", "group_idx"};
  static const std::vector<std::string> none;
  if (kind == "BlockStored") return stored;
  if (kind == "BlockRemoved") return removed;
  return none;
}

KvCacheEvent event(const std::string& kind, const Fields& f, const std::string& where) {
  auto required = [&](const char* name) -> const msgpack::object& {
    const msgpack::object* o = f.get(name);
    if (!o) throw Bad(where + ": " + name + " is missing");
    return *o;
  };
  auto optional = [&](const char* name) { return f.get(name); };
  const auto at = [&](const char* name) { return where + ": " + name; };
  if (kind == "BlockStored") {
    KvBlockStored s;
    s.blocks = blockKeys(required("block_hashes"), at("block_hashes"));
    if (const auto* p = optional("parent_block_hash"); p && p->type != msgpack::type::NIL)
      s.parent = blockKey(*p, at("parent_block_hash"));
    if (const auto* t = optional("token_ids")) s.token_ids = tokenIds(*t, at("token_ids"));
    s.block_size = integer(required("block_size"), at("block_size"));
    if (s.block_size <= 0) throw Bad(at("block_size") + ": " + std::to_string(s.block_size) + " is not positive");
    if (const auto* m = optional("medium")) s.medium = text(*m, at("medium"));
    if (const auto* l = optional("lora_name"); l && (l->type == msgpack::type::STR || l->type == msgpack::type::NIL))
      s.lora_name = text(*l, at("lora_name"));  // an array or map here is SGLang's metadata: not ours
    if (const auto* g = optional("group_idx")) s.group_idx = optionalInteger(*g, at("group_idx"));
    return s;
  }
  if (kind == "BlockRemoved") {
    KvBlockRemoved r;
    r.blocks = blockKeys(required("block_hashes"), at("block_hashes"));
    if (const auto* m = optional("medium")) r.medium = text(*m, at("medium"));
    if (const auto* g = optional("group_idx")) r.group_idx = optionalInteger(*g, at("group_idx"));
    return r;
  }
  return KvAllBlocksCleared{};
}

void decodeEvent(const msgpack::object& o, const std::string& where, KvEventBatch& batch) {
  std::string kind;
  Fields fields;
  if (o.type == msgpack::type::ARRAY) {
    const auto& a = o.via.array;
    if (a.size == 0) throw Bad(where + ": an empty event (no kind)");
    kind = text(a.ptr[0], where + ": kind");
    const auto& order = fieldOrder(kind);
    for (std::uint32_t i = 1; i < a.size && i - 1 < order.size(); ++i)
      fields.named.emplace_back(order[i - 1], &a.ptr[i]);
  } else if (o.type == msgpack::type::MAP) {
    const auto& m = o.via.map;
    for (std::uint32_t i = 0; i < m.size; ++i) {
      const std::string key = text(m.ptr[i].key, where + ": a key");
      if (key == "type")
        kind = text(m.ptr[i].val, where + ": type");
      else
        fields.named.emplace_back(key, &m.ptr[i].val);
    }
    if (kind.empty()) throw Bad(where + ": type is missing");
  } else {
    expected(where, "an event (array or map)", o);
  }
  if (kind != "BlockStored" && kind != "BlockRemoved" && kind != "AllBlocksCleared") {
    batch.unknown_kinds.push_back(kind.substr(0, 64));
    return;
  }
  batch.events.push_back(event(kind, fields, where + " (" + kind + ")"));
}

KvEventBatch decodeBatch(const msgpack::object& root) {
  KvEventBatch batch;
  const msgpack::object *ts = nullptr, *events = nullptr, *rank = nullptr;
  if (root.type == msgpack::type::ARRAY) {
    const auto& a = root.via.array;
    if (a.size < 2) throw Bad("batch: expected [ts, events, ...], got " + std::to_string(a.size) + " elements");
    ts = &a.ptr[0];
    events = &a.ptr[1];
    if (a.size > 2) rank = &a.ptr[2];
  } else if (root.type == msgpack::type::MAP) {
    for (std::uint32_t i = 0; i < root.via.map.size; ++i) {
      const auto& kv = root.via.map.ptr[i];
      const std::string key = text(kv.key, "batch: a key");
      if (key == "ts")
        ts = &kv.val;
      else if (key == "events")
        events = &kv.val;
      else if (key == "data_parallel_rank" || key == "attn_dp_rank")
        rank = &kv.val;
    }
    if (!ts || !events) throw Bad(std::string("batch: ") + (ts ? "events" : "ts") + " is missing");
  } else {
    expected("batch", "an array or map", root);
  }
  batch.ts = number(*ts, "ts");
  if (rank) batch.dp_rank = optionalInteger(*rank, "data_parallel_rank");
  const auto& list = array(*events, "events");
  batch.events.reserve(list.size);
  for (std::uint32_t i = 0; i < list.size; ++i) decodeEvent(list.ptr[i], "events[" + std::to_string(i) + "]", batch);
  return batch;
}

}  // namespace

std::optional<KvEventBatch> KvEventDecoder::decode(const char* data, std::size_t size, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<KvEventBatch> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (size > kMaxPayloadBytes)
    return fail("payload of " + std::to_string(size) + " bytes, more than the 64 MiB a batch may take");
  try {
    const msgpack::unpack_limit limits(kMaxElements, kMaxElements, kMaxPayloadBytes, kMaxPayloadBytes, kMaxPayloadBytes,
                                       32);
    std::size_t offset = 0;
    const msgpack::object_handle handle = msgpack::unpack(data, size, offset, nullptr, nullptr, limits);
    if (offset != size) return fail("payload: " + std::to_string(size - offset) + " bytes after the batch");
    return decodeBatch(handle.get());
  } catch (const Bad& e) {
    return fail(e.what());
  } catch (const std::exception& e) {  // msgpack's own: truncated, too deep, over a limit
    return fail(std::string("payload is not msgpack: ") + e.what());
  }
}

}  // namespace kvscope
