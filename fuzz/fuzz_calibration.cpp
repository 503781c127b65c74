// libFuzzer target for `kvscope-cli calibrate`'s untrusted inputs: the workers' logs and saved
// scrapes that `calibrate profile` fits, and the measured-results table that `calibrate fit` and
// `calibrate check` read. The input is three parts separated by NUL bytes: scheduler log text (fed
// line by line), one /metrics scrape body, and a target JSON (comments allowed, as the CLI reads it).
//
// Invariants (promises of core/calibration/ProfileCalibration.h and CalibrationTarget.h):
//  - the fit throws nothing but InputError (no usable Decode batch line), never on the scrape;
//  - a constant marked fitted holds the fit's estimate, and the profile file written from the result
//    loads with HardwareProfile::load (every constant within what a profile accepts);
//  - the table is produced without an exception;
//  - a target is refused only with InputError; one accepted has only finite metrics > 0 and decode
//    shares in [0, 1].
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/calibration/CalibrationTarget.h"
#include "core/calibration/ProfileCalibration.h"
#include "core/model/Error.h"
#include "fuzz/FuzzSupport.h"

namespace {

using namespace kvscope;
using fuzz::finding;

void fitProfile(std::string_view log, std::string_view scrape) {
  ProfileSamples samples;
  std::size_t start = 0;
  while (start < log.size()) {
    const std::size_t nl = log.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? log.size() : nl;
    samples.addLine(log.substr(start, end - start), "fuzz.log");
    start = end + 1;
  }
  if (!scrape.empty()) samples.addScrape("P0", scrape);
  CalibrationInputs inputs;
  inputs.logs = {"fuzz.log"};
  inputs.name = "fuzz";
  CalibrationResult r;
  try {
    r = ProfileCalibration::fit(samples, HardwareProfile{}, inputs);
  } catch (const InputError&) {
    return;  // no usable Decode batch line: said, nothing fitted
  }
  for (const auto& c : r.constants)
    if (c.fitted && c.value != c.estimate) finding("constant " + c.key + " marked fitted but not the estimate");
  // What `calibrate profile -o` writes must load as a profile (a fit reaches this rarely: a file is cheap).
  static const fuzz::TempDir dir("calibration");
  const std::string path = dir.file("profile.json");
  fuzz::TempDir::write(
      path, ProfileCalibration::toJson(r, inputs).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  try {
    (void)HardwareProfile::load(path);
  } catch (const InputError& e) {
    finding(std::string("the fitted profile does not load: ") + e.what());
  }
  (void)ProfileCalibration::table(r);
}

void readTarget(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false, true);
  if (j.is_discarded()) return;  // the CLI reports FILE:LINE for it
  CalibrationTarget t;
  try {
    t = CalibrationTarget::fromJson(j, "fuzz.json");
  } catch (const InputError&) {
    return;
  }
  for (const auto& row : t.rows) {
    for (const auto& [name, v] : row.metrics)
      if (!std::isfinite(v) || v <= 0) finding("row " + row.label + " metric " + name + " = " + std::to_string(v));
    for (double s : row.decode_shares)
      if (!(s >= 0 && s <= 1)) finding("row " + row.label + " share " + std::to_string(s));
  }
  (void)t.toJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string_view log = fuzz::nextPart(rest);
  const std::string_view scrape = fuzz::nextPart(rest);
  const std::string_view target = fuzz::nextPart(rest);
  fitProfile(log, scrape);
  readTarget(target);
  return 0;
}
