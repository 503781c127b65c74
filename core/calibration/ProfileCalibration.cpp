#include "core/calibration/ProfileCalibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/model/Error.h"

namespace kvscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// SGLang's kv_transfer_speed_gb_s is bytes / 1024^3 / seconds (python/sglang/srt/observability/
// req_time_stats.py, compute_and_observe_kv_transfer_metrics, sgl-project/sglang at 602413bc).
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string num(double v, int digits = 4) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string joinFiles(const std::vector<std::string>& files) {
  std::string s;
  for (const auto& f : files) s += (s.empty() ? "" : ", ") + f;
  return s.empty() ? "(no file)" : s;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// One least-squares model over samples: which columns it has, and the fit after dropping samples
// far from the first fit (a decode log interval that included idle time, a prefill gap that waited).
struct ModelFit {
  std::vector<int> columns;  // indices into the candidate columns
  LinearFit fit;
  long outliers = 0;
};

// Rows of candidate columns -> fit of `columns`, then once more without the samples whose relative
// residual is beyond max(6 robust sd, 20 %).
ModelFit fitColumns(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                    const std::vector<int>& columns) {
  ModelFit m;
  m.columns = columns;
  auto design = [&](const std::vector<std::size_t>& keep) {
    std::vector<double> X;
    X.reserve(keep.size() * columns.size());
    for (std::size_t i : keep)
      for (int c : columns) X.push_back(rows[i][static_cast<std::size_t>(c)]);
    return X;
  };
  std::vector<std::size_t> all(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) all[i] = i;
  m.fit = ProfileFit::leastSquares(design(all), columns.size(), y);
  if (!m.fit.ok) return m;
  std::vector<double> rel(y.size());
  for (std::size_t i = 0; i < y.size(); ++i)
    rel[i] = m.fit.fitted[i] != 0 ? (y[i] - m.fit.fitted[i]) / std::fabs(m.fit.fitted[i]) : 0;
  const double med = median(rel);
  std::vector<double> dev(rel.size());
  for (std::size_t i = 0; i < rel.size(); ++i) dev[i] = std::fabs(rel[i] - med);
  const double limit = std::max(6 * 1.4826 * median(dev), 0.2);
  std::vector<std::size_t> keep;
  std::vector<double> ykeep;
  for (std::size_t i = 0; i < y.size(); ++i)
    if (std::fabs(rel[i]) <= limit) {
      keep.push_back(i);
      ykeep.push_back(y[i]);
    }
  if (keep.size() == y.size() || keep.size() < columns.size() + 1) return m;
  LinearFit again = ProfileFit::leastSquares(design(keep), columns.size(), ykeep);
  if (!again.ok) return m;
  m.outliers = static_cast<long>(y.size() - keep.size());
  m.fit = std::move(again);
  return m;
}

// The coefficient of candidate column `c` in `m`, or -1 when the model does not have it.
int slot(const ModelFit& m, int c) {
  for (std::size_t i = 0; i < m.columns.size(); ++i)
    if (m.columns[i] == c) return static_cast<int>(i);
  return -1;
}

// The checks every fitted constant gets; `lo`/`hi` are what HardwareProfile::load accepts.
void judge(ConstantFit& c, double lo, double hi) {
  const double v = c.estimate;
  if (c.quality.samples < ProfileCalibration::kMinSamples)
    c.warnings.push_back("only " + std::to_string(c.quality.samples) + " samples (fewer than " +
                         std::to_string(ProfileCalibration::kMinSamples) + ")");
  if (std::isfinite(c.quality.r2) && c.quality.r2 < ProfileCalibration::kMinR2)
    c.warnings.push_back("R^2 = " + num(c.quality.r2, 3) + " < " + num(ProfileCalibration::kMinR2) +
                         ": the model explains little of the variation");
  if (std::isfinite(c.std_error) && std::isfinite(v) && v != 0 &&
      c.std_error > ProfileCalibration::kMaxRelativeSe * std::fabs(v))
    c.warnings.push_back("standard error " + num(c.std_error, 3) + " is " + num(100 * c.std_error / std::fabs(v), 3) +
                         "% of the value: poorly determined");
  if (!std::isfinite(v)) {
    c.fitted = false;
  } else if (v < 0) {
    c.warnings.push_back("negative estimate " + num(v) + " is implausible; kept the base profile's value");
    c.fitted = false;
  } else if (v < lo || v > hi) {
    c.warnings.push_back("estimate " + num(v) + " is outside what a profile accepts [" + num(lo) + ", " + num(hi) +
                         "]; kept the base profile's value");
    c.fitted = false;
  } else {
    c.fitted = true;
    if (c.base_value > 0 && (v > 10 * c.base_value || v < c.base_value / 10))
      c.warnings.push_back("more than 10x from the base profile's " + num(c.base_value) +
                           ": check the logs' workers and model");
  }
  c.value = c.fitted ? v : c.base_value;
}

ConstantFit constant(const std::string& key, double base_value, const std::string& source) {
  ConstantFit c;
  c.key = key;
  c.base_value = base_value;
  c.value = base_value;
  c.source = source;
  return c;
}

// The decode model: iteration time on 1, #running-req and #token, each regressor only where the
// lines vary it, dropping dependent columns until a fit succeeds.
struct DecodeModel {
  ModelFit fit;
  Spread running, tokens;
};

DecodeModel fitDecodeModel(const std::vector<DecodeSample>& d) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y, running, tokens;
  for (const auto& s : d) {
    rows.push_back({1.0, s.running, s.tokens});
    y.push_back(s.iteration_s);
    running.push_back(s.running);
    tokens.push_back(s.tokens);
  }
  DecodeModel dm;
  dm.running = ProfileFit::spread(running);
  dm.tokens = ProfileFit::spread(tokens);
  const Spread &sr = dm.running, &st = dm.tokens;
  std::vector<int> cols{0};
  if (sr.distinct >= 2) cols.push_back(1);
  if (st.distinct >= 2) cols.push_back(2);
  ModelFit& m = dm.fit;
  m = fitColumns(rows, y, cols);
  // Dependent columns (#token a fixed multiple of #running-req): drop #token, then #running-req.
  if (!m.fit.ok && cols.size() == 3) {
    m = fitColumns(rows, y, {0, 1});
    if (!m.fit.ok) m = fitColumns(rows, y, {0, 2});
  }
  if (!m.fit.ok && cols.size() > 1) m = fitColumns(rows, y, {0});
  return dm;
}

// Why a decode constant kept the base profile's value, or is poorly determined: no fit at all,
// terms the lines cannot separate, regressors with little spread. `n`: the number of lines.
void explainDecodeFit(const DecodeModel& dm, const std::string& n, ConstantFit& base, ConstantFit& per_req,
                      ConstantFit& per_tok) {
  const ModelFit& m = dm.fit;
  const Spread &sr = dm.running, &st = dm.tokens;
  const bool has_req = slot(m, 1) >= 0, has_tok = slot(m, 2) >= 0;
  if (!m.fit.ok) {
    for (auto* k : {&base, &per_req, &per_tok})
      k->warnings.push_back("no fit: " + m.fit.problem + "; kept the base profile's value");
  }
  if (!has_req) {
    const std::string why = sr.distinct < 2 ? "all " + n + " lines have #running-req = " + num(sr.mean, 6)
                                            : "#running-req and #token are not independent in these lines";
    std::string sum;
    if (m.fit.ok && slot(m, 0) >= 0)
      sum = " (together they come to " + num(m.fit.coef[static_cast<std::size_t>(slot(m, 0))]) + " s at " +
            num(sr.mean, 6) + " running requests)";
    per_req.warnings.push_back(
        why + ": the base and the per-request term cannot be separated; kept the base profile's value" + sum);
    base.warnings.push_back(
        why + ": the base and the per-request term cannot be separated; kept the base profile's value" + sum);
    base.estimate = kNaN;
    base.std_error = kNaN;
  } else if (sr.relative() < ProfileCalibration::kMinSpread) {
    per_req.warnings.push_back("little spread in #running-req (sd/mean = " + num(sr.relative(), 3) + ")");
  }
  if (!has_tok) {
    per_tok.warnings.push_back((st.distinct < 2
                                    ? "all " + n + " lines have #token = " + num(st.mean, 8)
                                    : std::string("#token is not independent of #running-req in these lines")) +
                               ": the per-context-token term cannot be fitted; kept the base profile's value");
  } else if (st.relative() < ProfileCalibration::kMinSpread) {
    per_tok.warnings.push_back("little spread in #token (sd/mean = " + num(st.relative(), 3) + ")");
  }
}

void fitDecode(const ProfileSamples& samples, const CalibrationInputs& inputs, CalibrationResult& r) {
  const auto& d = samples.decode();
  const DecodeCounts& dc = samples.decodeCounts();
  if (d.empty())
    throw InputError("no `Decode batch` lines with a running request and a generation throughput in " +
                     joinFiles(inputs.logs) + ": cannot fit the decode iteration time (" + std::to_string(dc.lines) +
                     " Decode batch lines: " + std::to_string(dc.no_running) + " with 0 running requests, " +
                     std::to_string(dc.no_throughput) + " with 0 throughput, " + std::to_string(dc.speculative) +
                     " speculative, " + std::to_string(dc.no_tokens) + " without #token)");
  const std::string source =
      "Decode batch lines: iteration time = #running-req / gen throughput (token/s), least squares on "
      "1, #running-req, #token";
  ConstantFit base = constant("decode_iteration_base_s", r.base.decode_iteration_base_s, source);
  ConstantFit per_req = constant("decode_iteration_per_request_s", r.base.decode_iteration_per_request_s, source);
  ConstantFit per_tok =
      constant("decode_iteration_per_context_token_s", r.base.decode_iteration_per_context_token_s, source);

  const DecodeModel dm = fitDecodeModel(d);
  const ModelFit& m = dm.fit;
  r.decode_outliers = m.outliers;
  const std::string n = std::to_string(d.size());
  std::vector<ConstantFit*> all{&base, &per_req, &per_tok};
  for (int c = 0; c < 3; ++c) {
    ConstantFit& k = *all[static_cast<std::size_t>(c)];
    k.quality = m.fit.quality;
    const int s = slot(m, c);
    if (!m.fit.ok || s < 0) continue;
    k.estimate = m.fit.coef[static_cast<std::size_t>(s)];
    k.std_error = m.fit.std_error[static_cast<std::size_t>(s)];
  }
  const bool has_req = slot(m, 1) >= 0, has_tok = slot(m, 2) >= 0;
  explainDecodeFit(dm, n, base, per_req, per_tok);
  if (m.outliers > 0)
    for (auto* k : all)
      k->warnings.push_back(std::to_string(m.outliers) + " of " + n +
                            " lines left out as outliers (more than 20 % and 6 robust sd from the first fit: an "
                            "interval with idle time?)");
  judge(base, 1e-6, 10);
  judge(per_req, 0, 10);
  judge(per_tok, 0, 1);
  if (!has_req) base.fitted = per_req.fitted = false, base.value = base.base_value, per_req.value = per_req.base_value;
  if (!has_tok) per_tok.fitted = false, per_tok.value = per_tok.base_value;
  r.constants.push_back(std::move(base));
  r.constants.push_back(std::move(per_req));
  r.constants.push_back(std::move(per_tok));
}

// What the prefill constants are fitted from, by the method the lines allow.
std::string prefillSource(PrefillMethod method) {
  std::string source;
  switch (method) {
    case PrefillMethod::InputThroughput:
      source =
          "Prefill batch lines' input throughput (token/s): the previous batch's #new-token over the time "
          "between the two lines; least squares of that time on 1, #new-token";
      break;
    case PrefillMethod::LineGapsMs:
      source =
          "time between consecutive Prefill batch lines (millisecond timestamps; this SGLang prints no input "
          "throughput); least squares of that time on 1, the earlier line's #new-token";
      break;
    case PrefillMethod::LineGapsSeconds:
      source =
          "time between Prefill batch lines (whole-second timestamps, so gaps summed over windows of >= 10 s, "
          "each +-1 s; this SGLang prints no input throughput); least squares of window time on #batches, #new-token";
      break;
    case PrefillMethod::None:
      source = "Prefill batch lines";
      break;
  }
  return source;
}

// The prefill model: each gap's (or window's) time on its batches and new tokens, least squares;
// without the per-batch overhead when every batch had the same new tokens (the two columns are then
// dependent) or when the two-column fit fails.
struct PrefillModel {
  ModelFit fit;
  Spread per_batch;  // new tokens per batch
  bool with_overhead = false;
};

PrefillModel fitPrefillModel(const std::vector<PrefillSample>& use) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y, per_batch;
  for (const auto& s : use) {
    rows.push_back({s.batches, s.tokens});
    y.push_back(s.seconds);
    per_batch.push_back(s.tokens / s.batches);
  }
  PrefillModel pm;
  pm.per_batch = ProfileFit::spread(per_batch);
  ModelFit& m = pm.fit;
  bool& with_overhead = pm.with_overhead;
  with_overhead = pm.per_batch.distinct >= 2;
  if (with_overhead) m = fitColumns(rows, y, {0, 1});
  if (!with_overhead || !m.fit.ok) {
    with_overhead = false;
    m = fitColumns(rows, y, {1});
  }
  return pm;
}

void fitPrefill(const ProfileSamples& samples, CalibrationResult& r) {
  std::vector<PrefillSample> all = samples.prefill(r.prefill_method, r.prefill);
  const std::string source = prefillSource(r.prefill_method);
  ConstantFit rate = constant("prefill_tokens_per_s", r.base.prefill_tokens_per_s, source);
  ConstantFit over = constant("prefill_overhead_s", r.base.prefill_overhead_s, source);
  auto keep = [&](const std::string& why) {
    rate.warnings.push_back(why + "; kept the base profile's value");
    over.warnings.push_back(why + "; kept the base profile's value");
    r.constants.push_back(std::move(rate));
    r.constants.push_back(std::move(over));
  };
  if (r.prefill.lines == 0) return keep("no Prefill batch lines in the logs");
  if (r.prefill_method == PrefillMethod::None)
    return keep("the Prefill batch lines carry neither an input throughput nor a time on every line");
  std::vector<PrefillSample> use;
  for (const auto& s : all)
    if (s.saturated) use.push_back(s);
  std::string caveat;
  if (static_cast<long>(use.size()) < 10) {
    use = all;
    caveat = "the worker was rarely saturated (#queue-req > 0 before only " +
             std::to_string(r.prefill.saturated_pairs) + " of " + std::to_string(r.prefill.pairs) +
             " gaps): gaps include idle time, so the throughput is a lower "
             "bound and the overhead an upper bound";
  }
  if (use.size() < 3) return keep("only " + std::to_string(use.size()) + " prefill gaps with a time");
  r.prefill_samples_used = static_cast<long>(use.size());
  const PrefillModel pm = fitPrefillModel(use);
  const ModelFit& m = pm.fit;
  const Spread& sp = pm.per_batch;
  const bool with_overhead = pm.with_overhead;
  r.prefill_outliers = m.outliers;
  rate.quality = over.quality = m.fit.quality;
  if (!m.fit.ok) return keep("no fit: " + m.fit.problem);
  const int st = slot(m, 1), so = slot(m, 0);
  const double b = m.fit.coef[static_cast<std::size_t>(st)], se_b = m.fit.std_error[static_cast<std::size_t>(st)];
  rate.estimate = b > 0 ? 1 / b : -1;  // a negative time per token: judged as negative below
  rate.std_error = b > 0 ? se_b / (b * b) : kNaN;
  if (so >= 0) {
    over.estimate = m.fit.coef[static_cast<std::size_t>(so)];
    over.std_error = m.fit.std_error[static_cast<std::size_t>(so)];
  }
  if (!caveat.empty()) rate.warnings.push_back(caveat), over.warnings.push_back(caveat);
  if (r.prefill_method == PrefillMethod::LineGapsSeconds) {
    const std::string w = "timestamps have whole seconds only: each window's time is uncertain by up to 1 s";
    rate.warnings.push_back(w);
    over.warnings.push_back(w);
  }
  if (!with_overhead) {
    const std::string w =
        "every batch had " + num(sp.mean, 8) + " new tokens: overhead and throughput cannot be separated";
    rate.warnings.push_back(w + "; the throughput includes the per-batch overhead");
    over.warnings.push_back(w + "; kept the base profile's value");
  } else if (sp.relative() < ProfileCalibration::kMinSpread) {
    rate.warnings.push_back("little spread in #new-token (sd/mean = " + num(sp.relative(), 3) + ")");
    over.warnings.push_back("little spread in #new-token (sd/mean = " + num(sp.relative(), 3) + ")");
  }
  if (m.outliers > 0) {
    const std::string w = std::to_string(m.outliers) + " of " + std::to_string(use.size()) +
                          " gaps left out as outliers (more than 20 % and 6 robust sd from the first fit)";
    rate.warnings.push_back(w);
    over.warnings.push_back(w);
  }
  judge(rate, 1, 1e9);
  judge(over, 0, 60);
  if (!with_overhead) over.fitted = false, over.value = over.base_value;
  r.constants.push_back(std::move(rate));
  r.constants.push_back(std::move(over));
}

void fitTransfer(const ProfileSamples& samples, const CalibrationInputs& inputs, CalibrationResult& r) {
  const TransferSamples& t = samples.transfer();
  r.transfer = t;
  ConstantFit bw = constant("link_bandwidth_bytes_per_s", r.base.link_bandwidth_bytes_per_s, "");
  if (t.hist_count > 0) {
    bw.source =
        "kv_transfer_speed_gb_s histogram in the saved scrapes: growth of _sum over growth of _count (the "
        "mean of the per-transfer speeds), GB = 2^30 bytes as upstream computes it";
    bw.estimate = t.hist_sum_gb_s / t.hist_count * kGiB;
    bw.quality.samples = static_cast<long>(t.hist_count);
    bw.warnings.push_back("a histogram's _sum and _count give the mean only: no standard error");
  } else if (!t.gauge_gb_s.empty()) {
    bw.source =
        "kv_transfer_speed_gb_s gauge in the saved scrapes (the last transfer's speed; each new value one "
        "transfer), mean, GB = 2^30 bytes as upstream computes it";
    double sum = 0;
    for (double v : t.gauge_gb_s) sum += v;
    const double n = static_cast<double>(t.gauge_gb_s.size());
    const double mean = sum / n;
    double ss = 0;
    for (double v : t.gauge_gb_s) ss += (v - mean) * (v - mean);
    bw.estimate = mean * kGiB;
    bw.quality.samples = static_cast<long>(n);
    if (n > 1) {
      bw.quality.residual_sd = std::sqrt(ss / (n - 1)) * kGiB;
      bw.std_error = bw.quality.residual_sd / std::sqrt(n);
    }
  } else {
    bw.source = "not fitted";
    bw.warnings.push_back(
        inputs.metrics.empty()
            ? "no --metrics given (the scheduler logs carry no transfer sizes or times); kept the base profile's value"
            : "no kv_transfer_speed_gb_s in the saved scrapes (" + std::to_string(t.scrapes) +
                  " scrapes; a prefill worker of a disaggregated SGLang exports it); kept the base profile's value");
    r.constants.push_back(std::move(bw));
    return;
  }
  judge(bw, 1e3, 1e13);
  r.constants.push_back(std::move(bw));
}

nlohmann::ordered_json numberOrNull(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

}  // namespace

const ConstantFit* CalibrationResult::find(const std::string& key) const {
  for (const auto& c : constants)
    if (c.key == key) return &c;
  return nullptr;
}

CalibrationResult ProfileCalibration::run(const CalibrationInputs& inputs) {
  const HardwareProfile base = HardwareProfile::load(inputs.base);
  ProfileSamples samples;
  for (const auto& log : inputs.logs) samples.addLogFile(log);
  for (const auto& [worker, path] : inputs.metrics) samples.addScrapeFile(worker, path);
  return fit(samples, base, inputs);
}

CalibrationResult ProfileCalibration::fit(const ProfileSamples& samples, const HardwareProfile& base,
                                          const CalibrationInputs& inputs) {
  CalibrationResult r;
  r.base = base;
  r.decode = samples.decodeCounts();
  r.log_lines = samples.lines();
  fitDecode(samples, inputs, r);
  fitPrefill(samples, r);
  fitTransfer(samples, inputs, r);
  r.profile = base;
  r.profile.name = inputs.name.empty() ? base.name + "-calibrated" : inputs.name;
  const std::pair<const char*, double HardwareProfile::*> keys[] = {
      {"decode_iteration_base_s", &HardwareProfile::decode_iteration_base_s},
      {"decode_iteration_per_request_s", &HardwareProfile::decode_iteration_per_request_s},
      {"decode_iteration_per_context_token_s", &HardwareProfile::decode_iteration_per_context_token_s},
      {"prefill_tokens_per_s", &HardwareProfile::prefill_tokens_per_s},
      {"prefill_overhead_s", &HardwareProfile::prefill_overhead_s},
      {"link_bandwidth_bytes_per_s", &HardwareProfile::link_bandwidth_bytes_per_s}};
  for (const auto& [key, member] : keys)
    if (const ConstantFit* c = r.find(key)) r.profile.*member = c->value;
  return r;
}

nlohmann::ordered_json ProfileCalibration::toJson(const CalibrationResult& r, const CalibrationInputs& inputs) {
  const HardwareProfile& p = r.profile;
  nlohmann::ordered_json j = p.toJson();

  nlohmann::ordered_json cal;
  cal["about"] =
      "Fitted by `kvscope-cli calibrate profile` from the workers' logs; every constant not listed under "
      "\"constants\" is the base profile's.";
  cal["base"] = inputs.base;
  nlohmann::ordered_json in;
  in["logs"] = inputs.logs;
  in["metrics"] = nlohmann::ordered_json::array();
  for (const auto& [worker, path] : inputs.metrics) in["metrics"].push_back({{"worker", worker}, {"path", path}});
  cal["inputs"] = in;
  cal["decode_lines"] = {{"lines", r.decode.lines},
                         {"used", r.decode.used},
                         {"outliers", r.decode_outliers},
                         {"zero_running", r.decode.no_running},
                         {"zero_throughput", r.decode.no_throughput},
                         {"speculative", r.decode.speculative},
                         {"no_token_count", r.decode.no_tokens}};
  cal["prefill_lines"] = {{"lines", r.prefill.lines},       {"with_input_throughput", r.prefill.with_throughput},
                          {"gaps", r.prefill.pairs},        {"saturated_gaps", r.prefill.saturated_pairs},
                          {"no_time", r.prefill.no_gap},    {"samples_used", r.prefill_samples_used},
                          {"outliers", r.prefill_outliers}, {"method", toString(r.prefill_method)}};
  cal["scrapes"] = {{"scrapes", r.transfer.scrapes},
                    {"with_transfer_metrics", r.transfer.scrapes_with_transfer_metrics}};
  nlohmann::ordered_json cs = nlohmann::ordered_json::object();
  for (const auto& c : r.constants) {
    nlohmann::ordered_json o;
    o["value"] = c.value;
    o["base_value"] = c.base_value;
    o["fitted"] = c.fitted;
    o["estimate"] = numberOrNull(c.estimate);
    o["r2"] = numberOrNull(c.quality.r2);
    o["residual_sd"] = numberOrNull(c.quality.residual_sd);
    o["samples"] = c.quality.samples;
    o["std_error"] = numberOrNull(c.std_error);
    o["warnings"] = c.warnings;
    o["source"] = c.source;
    cs[c.key] = o;
  }
  cal["constants"] = cs;
  j["calibration"] = cal;
  return j;
}

std::string ProfileCalibration::table(const CalibrationResult& r) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-38s %12s %12s %8s %7s  %-4s  ", "constant", "value", "base value", "R^2", "n",
                "from");
  out += std::string(buf) + "warning\n";
  for (const auto& c : r.constants) {
    std::snprintf(buf, sizeof buf, "%-38s %12s %12s %8s %7ld  %-4s  ", c.key.c_str(), num(c.value, 5).c_str(),
                  num(c.base_value, 5).c_str(), num(c.quality.r2, 4).c_str(), c.quality.samples,
                  c.fitted ? "fit" : "base");
    out += std::string(buf) + (c.warnings.empty() ? "-" : c.warnings.front()) + "\n";
    for (std::size_t i = 1; i < c.warnings.size(); ++i) out += std::string(87, ' ') + c.warnings[i] + "\n";
  }
  return out;
}

}  // namespace kvscope
