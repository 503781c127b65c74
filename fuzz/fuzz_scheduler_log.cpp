// libFuzzer target for the scheduler log parser, the traceback folding reader and the log -> event
// mapping: log files are untrusted input. The input is split into lines and fed
// to a reader per worker role, every record through a LogEventMapper. A crash, a hang, a sanitizer
// report or a broken invariant below is a finding.
//
// Invariants (promises of core/live/SchedulerLogReader.h and SchedulerLogParser.h):
//  - after flush(), every line is accounted for once: lines == known + unknown + malformed + folded;
//  - a record's message never exceeds SchedulerLogParser::kMaxMessage;
//  - a Malformed record names the field it rejects; no other kind carries a problem;
//  - link events name a known prefill and decode worker (the address book's).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/live/LogEventMapper.h"
#include "core/live/SchedulerLogReader.h"
#include "fuzz/FuzzSupport.h"

namespace {

using namespace kvscope;
using fuzz::finding;

void check(const LogRecord& r) {
  if (r.message.size() > SchedulerLogParser::kMaxMessage) finding("a message beyond kMaxMessage");
  if ((r.kind == LogLineKind::Malformed) != !r.problem.empty()) finding("problem set on the wrong kind");
  if (r.kind == LogLineKind::Malformed && r.problem.rfind("field '", 0) != 0) finding("a problem without its field");
}

void checkEvents(const LogMapping& m) {
  for (const auto& e : m.events) {
    if (const auto* l = std::get_if<LinkHealth>(&e))
      if (l->prefill != 0 || l->worker < 0 || l->worker > 1) finding("a link event on an unknown pair");
    if (const auto* t = std::get_if<TransferFinished>(&e))
      if (t->prefill != 0 || t->worker < 0 || t->worker > 1) finding("a transfer event on an unknown pair");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  LiveAddressBook book;
  book.decode_by_address = {{"10.0.0.1:15295", 0}, {"10.0.0.2:15295", 1}};
  book.prefill_by_address = {{"10.0.0.9:8998", 0}};
  book.decode_workers = {0, 1};
  LiveWorkerRef d;
  d.name = "D1";
  d.worker = 1;
  LiveWorkerRef p;
  p.name = "P0";
  p.role = WorkerRole::Prefill;
  p.prefill = 0;
  LogEventMapper mappers[] = {LogEventMapper(d, &book), LogEventMapper(p, &book)};
  SchedulerLogReader reader;
  const long lines = fuzz::forEachLine(text, [&](std::string_view line) {
    for (const auto& r : reader.feed(line)) {
      check(r);
      for (auto& m : mappers) checkEvents(m.map(r));
    }
  });
  for (const auto& r : reader.flush()) {
    check(r);
    for (auto& m : mappers) checkEvents(m.map(r));
  }
  const LogLineCounts& c = reader.counts();
  if (c.lines != lines) finding("line count differs");
  if (c.lines != c.known + c.unknown + c.malformed + c.folded) finding("a line counted twice or not at all");
  return 0;
}
