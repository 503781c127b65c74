// libFuzzer target for `kvscope-cli import` (LogImporter): a lab's old logs and saved scrapes are
// untrusted input, and the import orders three files' records by the times they claim. The input is
// split at NUL bytes into a D0 scheduler log, a P0 Mooncake log and D0's saved /metrics scrapes,
// written to a private temp directory and imported. A crash, a hang, a sanitizer report or a broken
// invariant below is a finding; an InputError (a file it cannot order, a bad scrape) is an answer.
//
// Invariants (promises of backend/live/LogImporter.h and LiveCluster):
//  - the stream starts with RunStarted and ends with RunFinished, sequence numbers 1, 2, 3, ...;
//  - event times never go back, and never pass the last record's time the result names;
//  - the result counts every file and its events.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "backend/live/LogImporter.h"
#include "core/model/Error.h"
#include "fuzz/FuzzSupport.h"

namespace {

using namespace kvscope;
using fuzz::finding;

struct Checker : EventSink {
  std::uint64_t n = 0;
  SimTime last = 0;
  bool finished = false;
  void onEvent(const Event& e) override {
    if (e.seq != ++n) finding("a sequence number out of order");
    if (n == 1 && !std::holds_alternative<RunStarted>(e.payload))
      finding("a stream that does not start with RunStarted");
    if (finished) finding("an event after RunFinished");
    if (e.time < last) finding("time went back");
    last = e.time;
    finished = std::holds_alternative<RunFinished>(e.payload);
  }
};

const fuzz::TempDir& dir() {
  static const fuzz::TempDir d("import");
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view rest = text;
  std::string_view parts[3];
  parts[0] = fuzz::nextPart(rest);
  parts[1] = fuzz::nextPart(rest);
  parts[2] = rest;  // the scrapes: NUL bytes and all
  const char* names[] = {"d0.log", "p0-mooncake.log", "d0.prom"};
  for (int i = 0; i < 3; ++i) fuzz::TempDir::write(dir().file(names[i]), parts[i]);

  ClusterConfig config;
  config.name = "fuzz";
  LiveWorkerConfig p, d;
  p.id = "P0";
  p.role = WorkerRole::Prefill;
  p.mooncake_logs = {dir().file("p0-mooncake.log")};
  d.id = "D0";
  d.logs = {dir().file("d0.log")};
  d.mooncake_address = "10.0.0.1:15295";
  if (!parts[2].empty()) d.metrics_scrapes = {dir().file("d0.prom")};
  config.workers = {p, d};
  LogImportOptions options;
  options.snapshot_interval_s = 5;  // a day between two lines is 17K snapshots, not 86K
  Checker checker;
  try {
    const LogImportResult r = LogImporter(config, options).run({&checker});
    if (!checker.finished) finding("no RunFinished");
    if (r.events != checker.n) finding("the result counts other events than were posted");
    if (r.files.size() != 2) finding("a log file missing from the result");
    if (r.last_us < r.first_us) finding("a window that ends before it starts");
    if (checker.last > r.last_us - r.first_us) finding("an event after the last record's time");
  } catch (const InputError&) {}
  return 0;
}
