#include "core/trace/AgenticSessionReader.h"
#include "core/io/InputFile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/model/Error.h"
#include "core/trace/BlockChain.h"
#include "core/trace/JsonValues.h"

namespace kvscope {

namespace {

using nlohmann::json;

constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxBlockSize = 1 << 20;
// Times become int64 microseconds downstream; even 17 nested offsets of 1e11 s stay far inside that.
constexpr double kMaxSeconds = 1e11;
// Real traces nest one level; the bound keeps hostile input from exhausting the stack.
constexpr int kMaxSubagentDepth = 16;
// Every top-level agentic session starts with the same system prompt + tool schema: one global chain.
constexpr std::uint64_t kBoilerplateScope = mixHash(0x6167656e74696300ULL, 1);
constexpr std::uint64_t kSubagentBoilerplateSalt = mixHash(0x6167656e74696300ULL, 2);
constexpr std::uint64_t kSessionSalt = mixHash(0x6167656e74696300ULL, 3);

// One JSON object inside the file, addressed by its field path (agentic files report line 0).
struct Node {
  const std::string& file;
  const json& obj;
  std::string path;  // "" for the root, "requests[3]." below it

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(formatInputError(file, 0, path + key, what));
  }
  const json* find(const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const json& field(const char* key) const {
    const json* v = find(key);
    if (!v) fail(key, "missing");
    return *v;
  }
  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi, const char* expected) const {
    const json& v = field(key);
    const auto n = jsonIntegral(v);
    if (!n || *n < lo) fail(key, std::string("expected ") + expected + ", got " + describeJsonValue(v));
    if (*n > hi) fail(key, "expected at most " + std::to_string(hi) + ", got " + describeJsonValue(v));
    return *n;
  }
  double seconds(const json& v, const char* key) const {
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= kMaxSeconds))
      fail(key, "expected a number of seconds in 0..1e11, got " + describeJsonValue(v));
    return v.get<double>();
  }
  const json& array(const char* key) const {
    const json& v = field(key);
    if (!v.is_array()) fail(key, "expected an array, got " + describeJsonValue(v));
    return v;
  }
  std::string string(const char* key) const {
    const json& v = field(key);
    if (!v.is_string()) fail(key, "expected a string, got " + describeJsonValue(v));
    return v.get<std::string>();
  }
  std::int32_t boilerplateTokens() const {
    const auto sys = integer("system_tokens", 0, kMaxTokens, "an integer >= 0");
    const auto tool = integer("tool_tokens", 0, kMaxTokens, "an integer >= 0");
    return static_cast<std::int32_t>(std::min(sys + tool, kMaxTokens));
  }
};

struct Reader {
  const std::string& file;
  const TraceOptions& options;
  std::int64_t block_size;
  std::uint64_t session_scope;
  SessionId next_id;
  Workload out;

  // Where a (sub-)agent's requests live in the file and what their prompts share.
  struct Agent {
    double start_s;
    std::string source;
    std::uint64_t shared_scope;
    std::int32_t shared_tokens;
    std::uint64_t unique_base;
  };

  Turn parseTurn(const Node& r, const Agent& agent, std::size_t index) const {
    Turn turn;
    turn.offset_s = r.seconds(r.field("t"), "t");
    const json* think = r.find("think_time");
    turn.think_s = think && !think->is_null() ? r.seconds(*think, "think_time") : 0.0;
    const auto in = r.integer("in", 1, kMaxTokens, "an integer > 0");
    turn.output_tokens = static_cast<std::int32_t>(r.integer("out", 0, kMaxTokens, "an integer >= 0"));

    const json& ids = r.array("hash_ids");
    const std::int64_t max_ids = (in + block_size - 1) / block_size;
    if (static_cast<std::int64_t>(ids.size()) > max_ids)
      r.fail("hash_ids", "expected at most " + std::to_string(max_ids) + " ids (ceil(in/" + std::to_string(block_size) +
                             ")), got " + std::to_string(ids.size()));
    PromptLayout& p = turn.prompt;
    p.input_tokens = static_cast<std::int32_t>(in);
    p.shared_prefix_tokens = std::min(agent.shared_tokens, p.input_tokens);
    p.shared_scope = agent.shared_scope;
    p.session_scope = session_scope;
    p.source_block_size = static_cast<std::int32_t>(block_size);
    p.unique_scope = mixHash(agent.unique_base, index);
    if (const auto bad = appendHashIds(ids, p.source_hashes))
      r.fail("hash_ids[" + std::to_string(*bad) + "]", "expected an integer >= 0, got " + describeJsonValue(ids[*bad]));
    return turn;
  }

  // A sub-agent entry: validated whole before any id is taken, so skipping it leaves nothing behind.
  void readSubagent(const Node& r, const Agent& parent, int depth) {
    if (depth >= kMaxSubagentDepth)
      r.fail("requests", "expected sub-agents nested at most " + std::to_string(kMaxSubagentDepth) + " deep");
    const double t = r.seconds(r.field("t"), "t");
    const std::string type = r.string("subagent_type");
    const json* agent_id = r.find("agent_id");
    if (agent_id && !agent_id->is_string())
      r.fail("agent_id", "expected a string, got " + describeJsonValue(*agent_id));
    const std::int32_t shared = r.boilerplateTokens();
    const json& requests = r.array("requests");
    // Sub-agents with the same role share their own system prompt + tool schema across sessions.
    const Agent agent{
        parent.start_s + t,
        parent.source + "#" + (agent_id ? agent_id->get<std::string>() : r.path.substr(0, r.path.size() - 1)),
        mixHash(kSubagentBoilerplateSalt, stableHash(type)), shared, mixHash(session_scope, stableHash(r.path))};
    readAgent(requests, r.path, agent, depth + 1);
  }

  void readAgent(const json& requests, const std::string& path, const Agent& agent, int depth) {
    Session s;
    s.id = next_id++;
    s.start_s = agent.start_s;
    s.source = agent.source;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const Node r{file, requests[i], path + "requests[" + std::to_string(i) + "]."};
      try {
        if (!r.obj.is_object()) {
          Node{file, r.obj, path}.fail("requests[" + std::to_string(i) + "]",
                                       "expected an object, got " + describeJsonValue(r.obj));
        }
        const std::string type = r.string("type");
        if (type == "subagent") {
          readSubagent(r, agent, depth);
        } else if (type == "s" || type == "n") {
          s.turns.push_back(parseTurn(r, agent, i));
        } else {
          r.fail("type", "expected \"s\", \"n\" or \"subagent\", got " + describeJsonValue(r.field("type")));
        }
      } catch (const InputError&) {
        if (!options.lenient) throw;
        ++out.skipped_records;
      }
    }
    // A session with no turns would have nothing to replay; its id stays used.
    if (!s.turns.empty()) out.sessions.push_back(std::move(s));
  }
};

// The 1-based line holding byte `byte` (nlohmann counts bytes from 1), by rereading the file.
long lineOfByte(const std::string& path, std::size_t byte) {
  std::ifstream in(path, std::ios::binary);
  long line = 1;
  char c;
  for (std::size_t i = 1; i < byte && in.get(c); ++i)
    if (c == '\n') ++line;
  return line;
}

json parseFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(formatInputError(path, 0, "", "is a directory, expected a kv-cache-tester .json file"));
  // One session's JSON: a large one is a few MB; whole-file size bounded as any small input.
  const std::string in = InputFile::readAll(path, std::size_t{256} << 20);
  auto strip = [](const json::exception& e) {
    std::string msg = e.what();
    if (const auto tag = msg.find("] "); msg.rfind("[json.exception", 0) == 0 && tag != std::string::npos)
      msg.erase(0, tag + 2);
    return "invalid JSON: " + msg;
  };
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(formatInputError(path, lineOfByte(path, e.byte), "", strip(e)));
  } catch (const json::exception& e) {
    throw InputError(formatInputError(path, 0, "", strip(e)));
  }
}

}  // namespace

void AgenticSessionReader::read(const std::string& path, const TraceOptions& options, SessionId& next_id,
                                Workload& into) {
  const json doc = parseFile(path);
  if (!doc.is_object())
    throw InputError(formatInputError(
        path, 0, "", "expected a JSON object (a kv-cache-tester session), got " + describeJsonValue(doc)));
  const Node root{path, doc, ""};
  const auto block_size = root.integer("block_size", 1, kMaxBlockSize, "an integer > 0");
  const std::int32_t shared = root.boilerplateTokens();
  const json& requests = root.array("requests");
  // Hash ids are scoped per trace: the file's id (or name) keeps two traces' ids apart.
  const json* id = root.find("id");
  const std::string key =
      id && id->is_string() ? id->get<std::string>() : std::filesystem::path(path).filename().string();

  Reader reader{path, options, block_size, mixHash(kSessionSalt, stableHash(key)), next_id, {}};
  const Reader::Agent top{0.0, path, kBoilerplateScope, shared, reader.session_scope};
  reader.readAgent(requests, "", top, 0);

  for (auto& s : reader.out.sessions) into.sessions.push_back(std::move(s));
  into.skipped_records += reader.out.skipped_records;
  next_id = reader.next_id;
}

}  // namespace kvscope
