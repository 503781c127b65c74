#include "core/calibration/FitParameter.h"

#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/knobs/KnobRegistry.h"
#include "core/model/Distribution.h"
#include "core/model/Error.h"
#include "core/model/NumberText.h"
#include "core/workload/SyntheticAgenticGenerator.h"

namespace kvscope {

using nlohmann::json;

namespace {

struct Scale {
  const char* name;
  std::vector<const char*> fields;  // workload distributions it multiplies
  const char* what;
};

const std::vector<Scale>& scales() {
  static const std::vector<Scale> s{
      {"context_scale", {"first_turn_tokens", "new_tokens"}, "multiplies first_turn_tokens and new_tokens"},
      {"boilerplate_scale", {"boilerplate_tokens"}, "multiplies boilerplate_tokens (the shared prefix)"},
      {"output_scale", {"output_tokens"}, "multiplies output_tokens"},
      {"think_scale", {"think_s"}, "multiplies think_s (time between turns)"},
      {"turns_scale", {"turns"}, "multiplies turns (per session)"},
  };
  return s;
}

const Scale* findScale(const std::string& name) {
  for (const auto& s : scales())
    if (name == s.name) return &s;
  return nullptr;
}

constexpr double kMaxScale = 100;

// The default of a workload distribution the scenario does not state (SyntheticAgenticSpec's).
Distribution defaultDist(const std::string& field) {
  const SyntheticAgenticSpec d;
  if (field == "boilerplate_tokens") return d.boilerplate_tokens;
  if (field == "first_turn_tokens") return d.first_turn_tokens;
  if (field == "turns") return d.turns;
  if (field == "new_tokens") return d.new_tokens;
  if (field == "output_tokens") return d.output_tokens;
  return d.think_s;
}

// A distribution's JSON form (what Distribution::fromJson reads) multiplied by `k`: its location
// and its clamps alike, so the shape is kept and only the unit changes.
json scaled(const Distribution& d, double k) {
  json j;
  switch (d.kind) {
    case Distribution::Kind::Fixed:
      j["fixed"] = d.a * k;
      break;
    case Distribution::Kind::Uniform:
      j["uniform"] = {d.a * k, d.b * k};
      break;
    case Distribution::Kind::LogNormal:
      j["lognormal"] = {{"median", d.a * k}, {"p90", d.b * k}};
      break;
  }
  if (d.min > -1e299) j["min"] = d.min * k;
  if (d.max < 1e299) j["max"] = d.max * k;
  return j;
}

bool synthetic(const json& scenario) {
  return !scenario.contains("workload") || scenario["workload"].value("kind", std::string("synthetic")) == "synthetic";
}

}  // namespace

std::string FitParameter::describeAll() {
  std::string out =
      "sessions (workload.sessions, 1..100000), start_window_s (workload.start_window_s: sessions start over it, "
      "0..1e6), single_turn_share (workload.single_turn_share, 0..1), boilerplate_variants "
      "(workload.boilerplate_variants: distinct shared prefixes, 1..10000)";
  for (const auto& s : scales()) out += ", " + std::string(s.name) + " (" + s.what + ", (0, 100])";
  out += ", knob.NAME (the scenario's knob NAME, within its range)";
  return out;
}

FitParameter FitParameter::parse(const std::string& text) {
  const auto eq = text.find('=');
  const auto colon = text.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos)
    throw InputError("--fit " + text + ": expected NAME=LO:HI, e.g. output_scale=0.5:2");
  FitParameter p;
  p.name = text.substr(0, eq);
  const std::string lo = text.substr(eq + 1, colon - eq - 1), hi = text.substr(colon + 1);
  char* end = nullptr;
  p.lo = std::strtod(lo.c_str(), &end);
  const bool lo_ok = !lo.empty() && *end == '\0' && std::isfinite(p.lo);
  p.hi = std::strtod(hi.c_str(), &end);
  const bool hi_ok = !hi.empty() && *end == '\0' && std::isfinite(p.hi);
  if (!lo_ok || !hi_ok) throw InputError("--fit " + text + ": LO and HI must be numbers (NAME=LO:HI)");
  if (p.lo >= p.hi) throw InputError("--fit " + text + ": empty range: LO must be below HI");
  double min = 0, max = 0;
  bool lo_open = false;
  if (p.name == "sessions") {
    min = 1, max = 100000, p.integer = true;
  } else if (p.name == "start_window_s") {
    min = 0, max = 1e6;
  } else if (p.name == "single_turn_share") {
    min = 0, max = 1;
  } else if (p.name == "boilerplate_variants") {
    min = 1, max = 10000, p.integer = true;
  } else if (findScale(p.name)) {
    min = 0, max = kMaxScale, lo_open = true;
  } else if (p.name.rfind("knob.", 0) == 0) {
    const auto id = KnobRegistry::find(p.name.substr(5));
    if (!id)
      throw InputError("--fit " + text + ": unknown knob '" + p.name.substr(5) +
                       "'; knobs: " + KnobRegistry::validNames());
    const KnobSpec& spec = KnobRegistry::spec(*id);
    min = spec.min, max = spec.max, p.integer = spec.integer;
  } else {
    throw InputError("--fit " + text + ": unknown parameter '" + p.name + "'; expected one of: " + describeAll());
  }
  if ((lo_open ? p.lo <= min : p.lo < min) || p.hi > max)
    throw InputError("--fit " + text + ": " + p.name + " must stay in " + (lo_open ? "(" : "[") + compactText(min) +
                     ", " + compactText(max) + "]");
  return p;
}

double FitParameter::current(const json& scenario) const {
  if (name.rfind("knob.", 0) == 0) {
    const std::string knob = name.substr(5);
    if (scenario.contains("knobs") && scenario["knobs"].contains(knob)) return scenario["knobs"][knob].get<double>();
    return KnobRegistry::spec(*KnobRegistry::find(knob)).default_value;
  }
  if (!synthetic(scenario))
    throw InputError("--fit " + name + ": the scenario's workload is a trace; " + name + " needs a synthetic workload");
  if (findScale(name)) return 1.0;
  const json w = scenario.value("workload", json::object());
  const SyntheticAgenticSpec d;
  if (name == "sessions") return w.value("sessions", static_cast<double>(d.sessions));
  if (name == "single_turn_share") return w.value("single_turn_share", d.single_turn_share);
  if (name == "boilerplate_variants")
    return w.value("boilerplate_variants", static_cast<double>(d.boilerplate_variants));
  return w.value("start_window_s", d.start_window_s);
}

double FitParameter::effective(double value) const { return integer ? std::round(value) : value; }

void FitParameter::apply(json& scenario, double value) const {
  value = effective(value);
  if (name.rfind("knob.", 0) == 0) {
    scenario["knobs"][name.substr(5)] = value;
    return;
  }
  json& w = scenario["workload"];
  if (name == "sessions") {
    w["sessions"] = static_cast<long>(value);
  } else if (name == "start_window_s" || name == "single_turn_share") {
    w[name] = value;
  } else if (name == "boilerplate_variants") {
    w[name] = static_cast<long>(value);
  } else {
    for (const char* field : findScale(name)->fields) {
      const Distribution base =
          w.contains(field) ? Distribution::fromJson(w[field], std::string("workload.") + field) : defaultDist(field);
      w[field] = scaled(base, value);
    }
  }
}

}  // namespace kvscope
