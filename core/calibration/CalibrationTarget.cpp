#include "core/calibration/CalibrationTarget.h"
#include "core/io/InputFile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/knobs/KnobRegistry.h"
#include "core/model/Error.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"

namespace kvscope {

using nlohmann::json;

namespace {

// The 1-based line of byte offset `pos` in `text`: nlohmann reports where parsing stopped as a byte.
long lineOf(const std::string& text, std::size_t pos) {
  pos = std::min(pos, text.size());
  return 1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& what) {
  throw InputError(formatInputError(file, 0, field, what));
}

double positive(const std::string& file, const std::string& field, const json& v) {
  if (!v.is_number()) fail(file, field, "expected a number, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0) fail(file, field, "expected a measured value > 0, got " + v.dump());
  return d;
}

void checkPolicy(const std::string& file, const std::string& field, const std::string& policy) {
  if (makePolicy(policy)) return;
  fail(file, field, "unknown policy \"" + policy + "\"; expected one of: " + policyNameList());
}

std::vector<double> shares(const std::string& file, const std::string& field, const json& v) {
  if (!v.is_array() || v.empty()) fail(file, field, "expected a non-empty array of shares in [0, 1], got " + v.dump());
  std::vector<double> out;
  double sum = 0;
  for (const auto& s : v) {
    if (!s.is_number() || s.get<double>() < 0 || s.get<double>() > 1)
      fail(file, field, "expected shares in [0, 1] (0.467, not 46.7%), got " + s.dump());
    out.push_back(s.get<double>());
    sum += out.back();
  }
  if (std::abs(sum - 1) > 0.02) fail(file, field, "the shares add up to " + std::to_string(sum) + ", not 1");
  return out;
}

TargetRow rowFromTable(const std::string& file, const std::string& label, const json& r) {
  const std::string where = "policies." + label;
  if (!r.is_object()) fail(file, where, "expected an object of metric: value");
  TargetRow row;
  row.label = label;
  row.policy = label;
  for (const auto& [key, value] : r.items()) {
    const std::string field = where + "." + key;
    if (key == "policy") {
      if (!value.is_string()) fail(file, field, "expected a policy name");
      row.policy = value.get<std::string>();
    } else if (key == "knobs") {
      if (!value.is_object()) fail(file, field, "expected an object of knob: value");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_number()) fail(file, field + "." + k, "expected a number, got " + v.dump());
        row.knobs[k] = v.get<double>();
      }
      KnobRegistry check;
      for (const auto& [k, v] : row.knobs)
        if (const auto res = check.apply({{k, v}}, "target"); !res.ok) fail(file, field + "." + k, res.error);
    } else if (key == "decode_shares") {
      row.decode_shares = shares(file, field, value);
    } else if (key == "note" || key == "comment") {
      // free text beside the numbers
    } else {
      const auto& names = CalibrationTarget::metricNames();
      if (std::find(names.begin(), names.end(), key) == names.end()) {
        std::string list;
        for (const auto& n : names) list += n + ", ";
        fail(file, field, "unknown metric; expected one of: " + list + "decode_shares (or policy, knobs, note)");
      }
      row.metrics[key] = positive(file, field, value);
    }
  }
  checkPolicy(file, where + ".policy", row.policy);
  if (row.metrics.empty() && row.decode_shares.empty()) fail(file, where, "no metric to reproduce");
  return row;
}

// `kvscope-cli report --format json`: one recorded run; its latency metrics, token imbalance and
// decode shares become one row named after its policy.
CalibrationTarget fromReport(const json& j, const std::string& file) {
  CalibrationTarget t;
  t.file = file;
  t.source = "report of a recorded run" + (j.contains("scenario") ? " (" + j["scenario"].dump() + ")" : std::string());
  RunSummary run;
  try {
    run.policy = j.at("policy").get<std::string>();
    for (const char* d : {"e2e_s", "ttft_s"}) {
      auto& s = std::string(d) == "e2e_s" ? run.e2e_s : run.ttft_s;
      s.mean = j.at(d).at("mean").get<double>();
      s.p50 = j.at(d).at("p50").get<double>();
      s.p90 = j.at(d).at("p90").get<double>();
      s.p99 = j.at(d).at("p99").get<double>();
    }
    if (j.contains("token_imbalance") && !j["token_imbalance"].is_null())
      run.token_imbalance = j["token_imbalance"].get<double>();
    for (const auto& w : j.at("workers")) {
      WorkerSummary ws;
      ws.role = w.at("role").get<std::string>();
      ws.share = w.at("share").get<double>();
      run.workers.push_back(ws);
    }
  } catch (const json::exception& e) {
    fail(file, "", std::string("not a `kvscope-cli report --format json` summary: ") + e.what());
  }
  checkPolicy(file, "policy", run.policy);
  TargetRow row;
  row.label = run.policy;
  row.policy = run.policy;
  for (const char* m : {"e2e_mean_s", "e2e_p50_s", "e2e_p90_s", "ttft_p90_s", "token_imbalance"})
    if (const auto v = CalibrationTarget::metricOf(run, m); v && *v > 0) row.metrics[m] = *v;
  row.decode_shares = CalibrationTarget::decodeSharesOf(run);
  if (row.metrics.empty()) fail(file, "", "the report holds no positive latency (no request completed?)");
  t.rows.push_back(row);
  return t;
}

}  // namespace

const std::vector<std::string>& CalibrationTarget::metricNames() {
  static const std::vector<std::string> names{
      "e2e_mean_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s", "ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s",
      "token_imbalance",
      // The lab's metrics (LabMetrics.h).
      "apc", "apc_ceiling_intra", "apc_ceiling_any", "tpot_p90_s", "worker_ttft_p90_max_s", "request_balance",
      "completion_rate",
      // The workload's shape (WorkloadShape): a trace characterisation to fit a synthetic workload to.
      "requests", "sessions", "input_mean_tokens", "input_p50_tokens", "input_p90_tokens", "output_mean_tokens",
      "output_p50_tokens", "single_turn_share", "inter_turn_p50_s", "inter_turn_p90_s", "share_over_32k",
      "reuse_intra_share"};
  return names;
}

std::optional<double> CalibrationTarget::metricOf(const RunSummary& run, const std::string& metric) {
  if (metric == "token_imbalance") return run.token_imbalance;
  const LabMetrics& lab = run.lab;
  const WorkloadShape& w = lab.workload;
  const auto field = [](const std::optional<SampleSummary>& s, double SampleSummary::*f) -> std::optional<double> {
    return s ? std::optional((*s).*f) : std::nullopt;
  };
  if (metric == "apc") return lab.apc;
  if (metric == "apc_ceiling_intra") return lab.apc_ceiling_intra;
  if (metric == "apc_ceiling_any") return lab.apc_ceiling_any;
  if (metric == "tpot_p90_s") return field(lab.tpot_s, &SampleSummary::p90);
  if (metric == "worker_ttft_p90_max_s") return lab.worker_ttft_p90_max_s;
  if (metric == "request_balance") return lab.request_balance;
  if (metric == "completion_rate") return lab.completion_rate;
  if (metric == "requests") return static_cast<double>(w.requests);
  if (metric == "sessions") return static_cast<double>(w.sessions);
  if (metric == "input_mean_tokens") return field(w.input_tokens, &SampleSummary::mean);
  if (metric == "input_p50_tokens") return field(w.input_tokens, &SampleSummary::p50);
  if (metric == "input_p90_tokens") return field(w.input_tokens, &SampleSummary::p90);
  if (metric == "output_mean_tokens") return field(w.output_tokens, &SampleSummary::mean);
  if (metric == "output_p50_tokens") return field(w.output_tokens, &SampleSummary::p50);
  if (metric == "single_turn_share") return w.single_turn_share;
  if (metric == "inter_turn_p50_s") return w.inter_turn_p50_s;
  if (metric == "inter_turn_p90_s") return w.inter_turn_p90_s;
  if (metric == "share_over_32k") return w.share_over_32k;
  if (metric == "reuse_intra_share") return w.reuse_intra_share;
  const bool e2e = metric.rfind("e2e_", 0) == 0;
  const SampleSummary& s = e2e ? run.e2e_s : run.ttft_s;
  const std::string stat = metric.substr(e2e ? 4 : 5);
  if (stat == "mean_s") return s.mean;
  if (stat == "p50_s") return s.p50;
  if (stat == "p90_s") return s.p90;
  if (stat == "p99_s") return s.p99;
  return std::nullopt;
}

std::vector<double> CalibrationTarget::decodeSharesOf(const RunSummary& run) {
  std::vector<double> out;
  double sum = 0;
  for (const auto& w : run.workers)
    if (w.role == "decode" || w.role == "unified") out.push_back(w.share), sum += w.share;
  // No routing seen (a run imported from engine logs): no shares, rather than all zero.
  if (sum <= 0) out.clear();
  return out;
}

CalibrationTarget CalibrationTarget::ofRun(const RunSummary& run, const std::map<std::string, double>& knobs,
                                           const std::string& file, const std::string& source) {
  CalibrationTarget t;
  t.file = file;
  t.source = source;
  TargetRow row;
  row.label = "run";
  row.policy = run.policy;
  row.knobs = knobs;
  for (const char* m :
       {"ttft_p50_s", "ttft_p90_s", "e2e_p50_s", "e2e_p90_s", "apc", "worker_ttft_p90_max_s", "completion_rate"})
    if (const auto v = metricOf(run, m); v && *v > 0) row.metrics[m] = *v;
  row.decode_shares = decodeSharesOf(run);
  if (row.metrics.empty() && row.decode_shares.empty()) fail(file, "", "the run holds no measurement (no request?)");
  t.rows.push_back(std::move(row));
  return t;
}

CalibrationTarget CalibrationTarget::load(const std::string& file) {
  const std::string text = InputFile::readAll(file);
  json j;
  try {
    j = json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw InputError(formatInputError(file, lineOf(text, e.byte == 0 ? 0 : e.byte - 1), "",
                                      std::string("invalid JSON: ") + e.what()));
  }
  return fromJson(j, file);
}

CalibrationTarget CalibrationTarget::fromJson(const json& j, const std::string& file) {
  if (!j.is_object()) fail(file, "", "expected a JSON object (a target table or a report --format json)");
  if (!j.contains("policies") && j.contains("e2e_s") && j.contains("workers")) return fromReport(j, file);
  CalibrationTarget t;
  t.file = file;
  for (const auto& [key, value] : j.items())
    if (key != "source" && key != "policies" && key != "note")
      fail(file, key, "unknown field; expected source, policies, note");
  if (j.contains("source")) {
    if (!j["source"].is_string()) fail(file, "source", "expected a string");
    t.source = j["source"].get<std::string>();
  }
  if (!j.contains("policies") || !j["policies"].is_object() || j["policies"].empty())
    fail(file, "policies", "expected an object of policy: {metric: value} with at least one policy");
  for (const auto& [label, row] : j["policies"].items()) t.rows.push_back(rowFromTable(file, label, row));
  return t;
}

json CalibrationTarget::toJson() const {
  json j;
  j["source"] = source;
  json rows_j = json::object();
  for (const auto& r : rows) {
    json row(r.metrics);
    if (r.policy != r.label) row["policy"] = r.policy;
    if (!r.knobs.empty()) row["knobs"] = r.knobs;
    if (!r.decode_shares.empty()) row["decode_shares"] = r.decode_shares;
    rows_j[r.label] = row;
  }
  j["policies"] = rows_j;
  return j;
}

const TargetRow* CalibrationTarget::row(const std::string& label) const {
  for (const auto& r : rows)
    if (r.label == label) return &r;
  return nullptr;
}

void CalibrationTarget::merge(const CalibrationTarget& other) {
  for (const auto& r : other.rows) {
    if (row(r.label))
      fail(other.file, "policies." + r.label, "this row is also in " + file + "; a label may appear once");
    rows.push_back(r);
  }
  if (!other.source.empty()) source += (source.empty() ? "" : "; ") + other.source;
  file += " + " + other.file;  // what a report names as the target
}

}  // namespace kvscope
