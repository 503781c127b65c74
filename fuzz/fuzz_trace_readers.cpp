// libFuzzer target for the trace readers: every input is written to one temp file
// per extension (.jsonl Mooncake, .json agentic, .csv Azure) and loaded through loadTrace() in strict
// and lenient mode. InputError is the readers' documented answer to bad input and is fine; any other
// exception, a crash, a hang, a sanitizer report or a broken invariant below is a finding.
//
// Invariants checked (each is a promise made in core/trace/*.h or the readers' comments):
//  - every session has at least one turn, unique ids >= first_session_id, sorted by (start_s, id);
//  - times are finite, >= 0 and small enough to become int64 microseconds downstream;
//  - token counts are in range (input > 0, output >= 0, shared prefix <= input), and there are at
//    most ceil(input / block size) hash ids;
//  - strict mode never skips a record, and a file strict mode accepts loads the same in lenient mode;
//  - AgenticSessionReader leaves `into` and `next_id` unchanged when it throws InputError.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/model/Error.h"
#include "core/model/Workload.h"
#include "core/trace/AgenticSessionReader.h"
#include "core/trace/TraceLoader.h"
#include "core/trace/TraceOptions.h"
#include "fuzz/FuzzSupport.h"

namespace {

using namespace kvscope;
using fuzz::finding;

bool timeOk(double s) {
  // secondsToTime() multiplies by 1e6 into an int64: 9.2e18 us is about 9.2e12 s.
  return std::isfinite(s) && s >= 0 && s <= 9.0e12;
}

void checkWorkload(const Workload& w, const TraceOptions& options, const std::string& path) {
  for (std::size_t i = 0; i < w.sessions.size(); ++i) {
    const Session& s = w.sessions[i];
    if (s.turns.empty()) finding("a session without turns", path);
    if (s.id < options.first_session_id) finding("a session id below first_session_id", path);
    if (!timeOk(s.start_s)) finding("a session start time that is negative, not finite or too large", path);
    if (i > 0) {
      const Session& p = w.sessions[i - 1];
      if (p.start_s > s.start_s || (p.start_s == s.start_s && p.id >= s.id))
        finding("sessions not sorted by (start_s, id) or ids not unique", path);
    }
    for (const Turn& t : s.turns) {
      if (!timeOk(t.offset_s) || !timeOk(t.think_s)) finding("a turn time out of range", path);
      if (!timeOk(s.start_s + t.offset_s)) finding("a turn arrival time out of range", path);
      const PromptLayout& p = t.prompt;
      if (p.input_tokens <= 0) finding("a turn with input_tokens <= 0", path);
      if (t.output_tokens < 0) finding("a turn with output_tokens < 0", path);
      if (p.shared_prefix_tokens < 0 || p.shared_prefix_tokens > p.input_tokens)
        finding("shared_prefix_tokens outside 0..input_tokens", path);
      if (p.source_block_size < 0) finding("a negative source_block_size", path);
      if (p.source_block_size > 0) {
        const std::int64_t max_ids =
            (static_cast<std::int64_t>(p.input_tokens) + p.source_block_size - 1) / p.source_block_size;
        if (static_cast<std::int64_t>(p.source_hashes.size()) > max_ids)
          finding("more hash ids than ceil(input_tokens / block size)", path);
      } else if (!p.source_hashes.empty()) {
        finding("hash ids without a block size", path);
      }
    }
  }
}

// Loads `path` strictly and leniently through the public entry point and cross-checks the two.
void loadBothWays(const std::string& path) {
  TraceOptions strict;
  TraceOptions lenient;
  lenient.lenient = true;

  bool strict_ok = false;
  std::size_t strict_sessions = 0;
  try {
    const Workload w = loadTrace(path, strict);
    strict_ok = true;
    strict_sessions = w.sessions.size();
    if (w.skipped_records != 0) finding("strict mode skipped records", path);
    checkWorkload(w, strict, path);
  } catch (const InputError&) {}

  try {
    const Workload w = loadTrace(path, lenient);
    checkWorkload(w, lenient, path);
    if (strict_ok && (w.skipped_records != 0 || w.sessions.size() != strict_sessions))
      finding("lenient mode loads a strictly valid file differently", path);
  } catch (const InputError&) {
    if (strict_ok) finding("lenient mode rejects a file strict mode accepts", path);
  }
}

// The agentic reader's own contract: on InputError neither `into` nor `next_id` changes.
void agenticKeepsStateOnError(const std::string& path, bool lenient) {
  TraceOptions options;
  options.lenient = lenient;
  Workload into;
  Session sentinel;
  sentinel.id = 7;
  sentinel.turns.emplace_back();
  into.sessions.push_back(sentinel);
  into.skipped_records = 3;
  SessionId next = 42;
  try {
    AgenticSessionReader::read(path, options, next, into);
    if (next < 42) finding("AgenticSessionReader moved next_id backwards", path);
    if (into.sessions.empty() || into.sessions.front().id != 7)
      finding("AgenticSessionReader dropped sessions already in `into`", path);
  } catch (const InputError&) {
    if (next != 42 || into.sessions.size() != 1 || into.skipped_records != 3)
      finding("AgenticSessionReader changed `into` or `next_id` before throwing InputError", path);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::TempDir dir("trace");
  static const std::string mooncake = dir.file("input.jsonl");
  static const std::string agentic = dir.file("input.json");
  static const std::string azure = dir.file("input.csv");

  fuzz::TempDir::write(mooncake, data, size);
  loadBothWays(mooncake);

  fuzz::TempDir::write(agentic, data, size);
  loadBothWays(agentic);
  agenticKeepsStateOnError(agentic, false);
  agenticKeepsStateOnError(agentic, true);

  fuzz::TempDir::write(azure, data, size);
  loadBothWays(azure);
  return 0;
}
