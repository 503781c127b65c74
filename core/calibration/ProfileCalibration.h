#pragma once
// `kvscope-cli calibrate profile`: fits the hardware profile's constants from
// what the workers printed and says, for each, how far the fit can be trusted. Its own class so the
// CLI only parses options and prints: the samples come from ProfileSamples, the least squares from
// ProfileFit; here the model of each constant, the warnings, the fallback to the base profile and
// the output file (a HardwareProfile JSON plus a "calibration" object) are decided.
//
//   decode iteration time = decode_iteration_base_s + per_request_s x #running-req
//                           + per_context_token_s x #token                  (Decode batch lines)
//   prefill batch time    = prefill_overhead_s + #new-token / prefill_tokens_per_s  (Prefill batch lines)
//   link_bandwidth_bytes_per_s = mean kv_transfer_speed_gb_s x 2^30          (saved /metrics scrapes)
// A constant the data do not pin down keeps the base profile's value, with a warning saying why.
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/calibration/ProfileFit.h"
#include "core/calibration/ProfileSamples.h"
#include "core/scenario/HardwareProfile.h"

namespace kvscope {

struct CalibrationInputs {
  std::vector<std::string> logs;                             // scheduler logs
  std::vector<std::pair<std::string, std::string>> metrics;  // (worker, saved-scrape file)
  std::string base = "h200";                                 // --base: a bundled name or a .json path
  std::string name;                                          // the written profile's "name"
};

struct ConstantFit {
  std::string key;        // the profile key, e.g. "decode_iteration_base_s"
  double value = 0;       // what the profile gets
  double base_value = 0;  // the base profile's value
  bool fitted = false;    // value is the fit's estimate (false: the base's value was kept)
  double estimate = std::numeric_limits<double>::quiet_NaN();  // the fit's estimate, used or not
  double std_error = std::numeric_limits<double>::quiet_NaN();
  FitQuality quality;
  std::vector<std::string> warnings;
  std::string source;  // what it was fitted from, and how
};

struct CalibrationResult {
  HardwareProfile profile;
  HardwareProfile base;
  std::vector<ConstantFit> constants;  // the six constants the logs and scrapes can give
  DecodeCounts decode;
  long decode_outliers = 0;  // dropped after the first fit (far slower or faster than it)
  PrefillCounts prefill;
  PrefillMethod prefill_method = PrefillMethod::None;
  long prefill_samples_used = 0;
  long prefill_outliers = 0;
  TransferSamples transfer;
  long log_lines = 0;
  const ConstantFit* find(const std::string& key) const;
};

class ProfileCalibration {
 public:
  static constexpr long kMinSamples = 20;         // fewer: warned
  static constexpr double kMinR2 = 0.5;           // lower: warned
  static constexpr double kMinSpread = 0.1;       // sd/mean of a regressor below this: warned
  static constexpr double kMaxRelativeSe = 0.25;  // std error above this share of the value: warned

  // Reads the base profile, the logs and the scrapes, then fits. Throws InputError (a file that
  // cannot be read, no usable Decode batch line).
  static CalibrationResult run(const CalibrationInputs& inputs);
  // The fit over samples already read; `inputs` only names the files in messages.
  static CalibrationResult fit(const ProfileSamples& samples, const HardwareProfile& base,
                               const CalibrationInputs& inputs);

  // The profile file: every key of resources/profiles/*.json, then "calibration".
  static nlohmann::ordered_json toJson(const CalibrationResult& result, const CalibrationInputs& inputs);
  // The table printed to stdout: constant, value, base value, R^2, n, warning.
  static std::string table(const CalibrationResult& result);
};

}  // namespace kvscope
