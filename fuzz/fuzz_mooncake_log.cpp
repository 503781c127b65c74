// libFuzzer target for the Mooncake transfer-engine (glog) log parser and its mapping onto link
// events: a Mooncake log is untrusted input. The input is split into lines and
// fed to a mapper for a prefill and one for a decode worker. A crash, a hang, a sanitizer report or
// a broken invariant below is a finding.
//
// Invariants (promises of core/live/MooncakeLogParser.h and MooncakeLogMapper.h):
//  - every line is counted once: lines == known + unknown + not_glog;
//  - a record's message never exceeds MooncakeLogParser::kMaxMessage, a reason kMaxReason;
//  - a glog record has a severity of I, W, E or F and a file; a NotGlog record has neither;
//  - a peer is the NIC path up to its '@';
//  - link events name a known prefill and decode worker (the address book's).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/live/MooncakeLogMapper.h"
#include "fuzz/FuzzSupport.h"

namespace {

using namespace kvscope;
using fuzz::finding;

void check(const MooncakeLogRecord& r) {
  if (r.message.size() > MooncakeLogParser::kMaxMessage) finding("a message beyond kMaxMessage");
  const bool glog = r.kind != MooncakeLineKind::NotGlog;
  if (glog != (r.severity == 'I' || r.severity == 'W' || r.severity == 'E' || r.severity == 'F'))
    finding("a severity on the wrong kind");
  if (glog && r.file.empty()) finding("a glog record without its file");
  if (!r.peer_nic.empty() && r.peer != MooncakeLogParser::serverOf(r.peer_nic))
    finding("a peer that is not its NIC's server");
}

void checkEvents(const LogMapping& m) {
  if (m.gauges) finding("gauges from a Mooncake line");
  for (const auto& e : m.events) {
    const auto* l = std::get_if<LinkHealth>(&e);
    if (!l) finding("an event other than LinkHealth");
    if (l->prefill != 0 || l->worker < 0 || l->worker > 1) finding("a link event on an unknown pair");
    if (l->reason.size() > MooncakeLogMapper::kMaxReason) finding("a reason beyond kMaxReason");
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
  MooncakeLogMapper mappers[] = {MooncakeLogMapper(d, &book), MooncakeLogMapper(p, &book)};
  const long lines = fuzz::forEachLine(text, [&](std::string_view line) {
    check(MooncakeLogParser::parse(line));
    for (auto& m : mappers) checkEvents(m.feed(line));
  });
  for (const auto& m : mappers) {
    const MooncakeLineCounts& c = m.counts();
    if (c.lines != lines) finding("line count differs");
    if (c.lines != c.known + c.unknown + c.not_glog) finding("a line counted twice or not at all");
    if (m.unknownShapes().total() != c.unknown) finding("an unknown line not counted by shape");
  }
  return 0;
}
