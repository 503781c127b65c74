#pragma once
// The scenario parameters `calibrate fit` may vary, each a named edit of the scenario's JSON, so the
// fitted scenario is an ordinary scenario file with the fitted values written in:
//   sessions          workload.sessions (rounded to a whole number)
//   start_window_s    workload.start_window_s: sessions start spread over this many seconds
//   single_turn_share workload.single_turn_share: sessions of one request
//   boilerplate_variants workload.boilerplate_variants: distinct shared prefixes (a whole number)
//   context_scale     multiplies workload.first_turn_tokens and workload.new_tokens (median, p90,
//                     min, max): how long prompts are
//   boilerplate_scale multiplies workload.boilerplate_tokens (the prefix every session shares)
//   output_scale      multiplies workload.output_tokens
//   think_scale       multiplies workload.think_s (time between a session's turns)
//   turns_scale       multiplies workload.turns (turns per session)
//   knob.NAME         the scenario's knob NAME (any knob of the KnobRegistry, within its range)
// Scales are relative to the scenario given to the fit (1 = unchanged). The workload parameters need
// a synthetic workload. Hardware-profile constants are not fit parameters: a profile is a file of
// measured constants (docs/calibration.md section 1).
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kvscope {

struct FitParameter {
  std::string name;
  double lo = 0, hi = 0;  // the range searched
  bool integer = false;

  // "NAME=LO:HI". Throws InputError for an unknown NAME, a malformed or empty range (LO >= HI), or
  // a range outside what NAME allows (a scale must stay in (0, 100], sessions in [1, 100000], a
  // knob within its registry range).
  static FitParameter parse(const std::string& text);
  // Every NAME with what it changes, for --help and errors.
  static std::string describeAll();

  // NAME's value in `scenario` (a scenario's JSON, as loaded): 1 for a scale, the knob's value (or
  // its default), the workload's field (or its default). Throws InputError when NAME does not apply
  // (a workload parameter on a trace workload).
  double current(const nlohmann::json& scenario) const;
  // Writes `value` into `scenario` (a copy of the base scenario's JSON): scales multiply the base's
  // distributions, so apply each parameter once to a fresh copy of the base.
  void apply(nlohmann::json& scenario, double value) const;
  // The value as it is written (rounded for integers).
  double effective(double value) const;
};

}  // namespace kvscope
