#include "core/trace/MooncakeTraceReader.h"
#include "core/io/InputFile.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/model/Error.h"
#include "core/trace/BlockChain.h"
#include "core/trace/JsonValues.h"

namespace kvscope {

namespace {

using nlohmann::json;

constexpr std::int64_t kMooncakeBlockSize = 512;
constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();
constexpr double kMaxMs = 1e14;  // times become int64 microseconds downstream
// Mooncake hash ids are remapped globally across the whole trace, so one scope serves every request.
constexpr std::uint64_t kMooncakeScope = mixHash(0x6d6f6f6e63616b65ULL, 1);
constexpr std::uint64_t kMooncakeUniqueSalt = mixHash(0x6d6f6f6e63616b65ULL, 2);

struct Record {
  const std::string& file;
  long line;
  const json& obj;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(formatInputError(file, line, field, what));
  }
  const json& field(const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(key, "missing");
    return *it;
  }
  std::int64_t integer(const char* key, std::int64_t lo, const char* expected) const {
    const json& v = field(key);
    const auto n = jsonIntegral(v);
    if (!n || *n < lo) fail(key, std::string("expected ") + expected + ", got " + describeJsonValue(v));
    if (*n > kMaxTokens) fail(key, "expected at most " + std::to_string(kMaxTokens) + ", got " + describeJsonValue(v));
    return *n;
  }
};

// nlohmann's message without its "[json.exception.parse_error.101] " tag and the line (always 1 here).
std::string jsonMessage(const json::exception& e) {
  std::string msg = e.what();
  if (const auto tag = msg.find("] "); msg.rfind("[json.exception", 0) == 0 && tag != std::string::npos)
    msg.erase(0, tag + 2);
  if (const auto at = msg.find("at line 1, column "); at != std::string::npos) msg.erase(at + 3, 8);
  return msg;
}

Session parseRecord(const std::string& file, long line_no, const std::string& line, SessionId id) {
  json obj;
  try {
    obj = json::parse(line);
  } catch (const json::exception& e) {
    throw InputError(formatInputError(file, line_no, "", "invalid JSON: " + jsonMessage(e)));
  }
  const Record r{file, line_no, obj};
  if (!obj.is_object()) r.fail("", "expected a JSON object per line, got " + describeJsonValue(obj));

  const json& ts = r.field("timestamp");
  if (!ts.is_number() || !(ts.get<double>() >= 0 && ts.get<double>() <= kMaxMs))
    r.fail("timestamp", "expected a number of ms in 0..1e14, got " + describeJsonValue(ts));
  const std::int64_t in = r.integer("input_length", 1, "an integer > 0");
  const std::int64_t out = r.integer("output_length", 0, "an integer >= 0");

  const json& ids = r.field("hash_ids");
  if (!ids.is_array()) r.fail("hash_ids", "expected an array of integers >= 0, got " + describeJsonValue(ids));
  const std::int64_t max_ids = (in + kMooncakeBlockSize - 1) / kMooncakeBlockSize;
  if (static_cast<std::int64_t>(ids.size()) > max_ids)
    r.fail("hash_ids", "expected at most " + std::to_string(max_ids) + " ids (ceil(input_length/512)), got " +
                           std::to_string(ids.size()));

  Turn turn;
  turn.output_tokens = static_cast<std::int32_t>(out);
  PromptLayout& p = turn.prompt;
  p.input_tokens = static_cast<std::int32_t>(in);
  p.session_scope = kMooncakeScope;
  p.source_block_size = static_cast<std::int32_t>(kMooncakeBlockSize);
  p.unique_scope = mixHash(kMooncakeUniqueSalt, static_cast<std::uint64_t>(line_no));
  if (const auto bad = appendHashIds(ids, p.source_hashes))
    r.fail("hash_ids[" + std::to_string(*bad) + "]", "expected an integer >= 0, got " + describeJsonValue(ids[*bad]));

  Session s;
  s.id = id;
  s.start_s = ts.get<double>() / 1000.0;
  s.source = file + ":" + std::to_string(line_no);
  s.turns.push_back(std::move(turn));
  return s;
}

// A record's hash_ids of the longest prompt a route can carry (2^16 blocks) fit well inside this.
constexpr std::size_t kMaxTraceLineBytes = std::size_t{8} << 20;

bool isBlank(const std::string& line) { return line.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

Workload MooncakeTraceReader::read(const std::string& path, const TraceOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(formatInputError(path, 0, "", "is a directory, expected a Mooncake .jsonl file"));
  std::ifstream in = InputFile::open(path);

  Workload w;
  SessionId next = options.first_session_id;
  std::string line;
  long line_no = 0;
  bool too_long = false;
  while (InputFile::readLine(in, line, &too_long, path, kMaxTraceLineBytes)) {
    ++line_no;
    if (isBlank(line)) continue;
    try {
      if (too_long)
        throw InputError(formatInputError(
            path, line_no, "",
            "a line longer than " + std::to_string(kMaxTraceLineBytes) + " bytes: not a trace record"));
      w.sessions.push_back(parseRecord(path, line_no, line, next));
      ++next;
    } catch (const InputError&) {
      if (!options.lenient) throw;
      ++w.skipped_records;
    }
  }
  return w;
}

}  // namespace kvscope
