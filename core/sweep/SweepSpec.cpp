#include "core/sweep/SweepSpec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <thread>

#include "core/knobs/KnobRegistry.h"
#include "core/model/Error.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"

namespace kvscope {

namespace {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string::npos ? text.size() : comma;
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<double> parseNumber(const std::string& text) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parseSeed(const std::string& text) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v > (1ULL << 53)) return std::nullopt;
  return v;
}

// Knob values compare as numbers ("200" and "200.0" are one value); policies as names.
bool sameValue(const std::string& axis, const std::string& a, const std::string& b) {
  if (axis == "policy" || axis == "dispatch") return a == b;
  const auto x = parseNumber(a), y = parseNumber(b);
  return x && y ? *x == *y : a == b;
}

std::string flagFor(const std::string& field) {
  const auto dot = field.find('.');
  const std::string head = field.substr(0, dot);
  const std::string rest = dot == std::string::npos ? "" : " " + field.substr(dot + 1);
  if (head == "grid") return "--grid" + rest;
  if (head == "knobs") return "--set" + rest;
  if (head == "baseline") return "--baseline";
  if (head == "duration_s") return "--duration";
  if (head == "max_inflight_sessions") return "--max-inflight-sessions";
  if (head == "wall_deadline_s") return "--wall-deadline";
  return "--" + head;
}

}  // namespace

std::string SweepSpec::describe(const std::string& field, const std::string& what) const {
  if (file.empty()) return flagFor(field) + ": " + what;
  long line = 0;
  for (std::string f = field;;) {  // the field's own line, else its parent's ("grid.K" -> "grid")
    if (auto it = lines.find(f); it != lines.end()) {
      line = it->second;
      break;
    }
    const auto dot = f.rfind('.');
    if (dot == std::string::npos) break;
    f.resize(dot);
  }
  return formatInputError(file, line, field, what);
}

SweepAxis SweepSpec::parseGrid(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--grid: expected NAME=V1,V2,... (a knob or `policy`), got '" + text + "'");
  SweepAxis axis;
  axis.name = text.substr(0, eq);
  const std::string values = text.substr(eq + 1);
  if (values.find_first_not_of(" \t,") == std::string::npos)
    throw InputError("--grid " + axis.name + ": empty grid; expected at least one value after '='");
  axis.values = splitList(values);
  return axis;
}

std::vector<std::uint64_t> SweepSpec::parseSeeds(const std::string& text) {
  if (text.find(',') == std::string::npos) {
    const auto count = parseSeed(text);
    if (!count || *count < 1 || *count > 100000)
      throw InputError("--seeds: expected a count in [1, 100000] or a list like 3,7,11, got '" + text + "'");
    std::vector<std::uint64_t> seeds;
    for (std::uint64_t s = 1; s <= *count; ++s) seeds.push_back(s);
    return seeds;
  }
  std::vector<std::uint64_t> seeds;
  auto items = splitList(text);
  if (!items.empty() && items.back().empty()) items.pop_back();  // "7," is the single seed 7
  for (const auto& item : items) {
    const auto s = parseSeed(item);
    if (!s) throw InputError("--seeds: expected whole numbers >= 0, got '" + item + "' in '" + text + "'");
    seeds.push_back(*s);
  }
  return seeds;
}

std::vector<std::pair<std::string, std::string>> SweepSpec::parseBaseline(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : splitList(text)) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InputError("--baseline: expected AXIS=VALUE,... naming a grid point, got '" + text + "'");
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

std::vector<SweepPoint> SweepSpec::points() const {
  std::vector<SweepPoint> out(1);
  for (const auto& axis : axes) {
    std::vector<SweepPoint> next;
    for (const auto& base : out)
      for (const auto& value : axis.values) {
        SweepPoint p = base;
        p.coords.emplace_back(axis.name, value);
        if (axis.name == "policy")
          p.policy = value;
        else if (axis.name == "dispatch")
          p.dispatch = value;
        else if (auto v = parseNumber(value))
          p.knobs[axis.name] = *v;
        next.push_back(std::move(p));
      }
    out = std::move(next);
  }
  return out;
}

std::size_t SweepSpec::baselineIndex() const {
  const auto pts = points();
  for (std::size_t i = 0; i < pts.size(); ++i) {
    bool match = true;
    for (std::size_t a = 0; a < axes.size() && match; ++a) {
      std::string want = axes[a].values.front();
      for (const auto& [axis, value] : baseline)
        if (axis == axes[a].name) want = value;
      match = sameValue(axes[a].name, pts[i].coords[a].second, want);
    }
    if (match) return i;
  }
  return 0;
}

SimulationOptions SweepSpec::optionsFor(const SweepPoint& point, std::uint64_t seed) const {
  SimulationOptions o;
  o.knobs = fixed_knobs;
  for (const auto& [k, v] : point.knobs) o.knobs[k] = v;
  o.policy = point.policy;
  o.seed = seed;
  o.duration_s = duration_s;
  o.dispatch = point.dispatch.empty() ? dispatch : parseDispatch(point.dispatch);
  o.max_inflight_sessions = max_inflight_sessions;
  o.wall_deadline_s = wall_deadline_s;
  o.trace = traceFor(seed);
  return o;
}

const std::string& SweepSpec::traceFor(std::uint64_t seed) const {
  static const std::string none;
  if (traces.size() <= 1) return traces.empty() ? none : traces.front();
  const auto it = std::find(seeds.begin(), seeds.end(), seed);
  const auto i = static_cast<std::size_t>(it - seeds.begin());
  return i < traces.size() ? traces[i] : none;
}

unsigned SweepSpec::effectiveJobs() const {
  if (jobs > 0) return jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

void SweepSpec::validate() const {
  const Scenario base = [&] {
    try {
      return Scenario::load(scenario);
    } catch (const InputError& e) {
      throw InputError(describe("scenario", e.what()));
    }
  }();
  if (axes.empty())
    throw InputError(describe("grid", "empty grid; a sweep needs at least one axis (a knob or `policy`) with values"));
  std::set<std::string> names;
  for (const auto& axis : axes) {
    const std::string field = "grid." + axis.name;
    if (axis.name == "seed")
      throw InputError(
          describe(field, "the seeds are not a grid axis; give them with --seeds (or \"seeds\" in a file)"));
    if (!names.insert(axis.name).second) throw InputError(describe(field, "the axis is given twice"));
    if (axis.values.empty()) throw InputError(describe(field, "empty grid; expected at least one value"));
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      if (axis.values[i].empty()) throw InputError(describe(field, "empty value in the list"));
      for (std::size_t j = 0; j < i; ++j)
        if (sameValue(axis.name, axis.values[j], axis.values[i]))
          throw InputError(describe(field, "value '" + axis.values[i] + "' is given twice"));
    }
    if (axis.name == "policy") {
      for (const auto& value : axis.values)
        if (!makePolicy(value))
          throw InputError(describe(field, "unknown policy '" + value + "'; expected one of: " + policyNameList()));
      continue;
    }
    if (axis.name == "dispatch") {
      for (const auto& value : axis.values)
        if (!parseDispatch(value))
          throw InputError(describe(field, "unknown dispatch '" + value + "'; expected " + kDispatchNames));
      continue;
    }
    if (!KnobRegistry::find(axis.name))
      throw InputError(describe(field, "unknown knob '" + axis.name + "'; expected `policy`, `dispatch` or one of: " +
                                           KnobRegistry::validNames()));
    for (const auto& value : axis.values) {
      const auto v = parseNumber(value);
      if (!v) throw InputError(describe(field, "expected a number, got '" + value + "'"));
      KnobRegistry check;
      const auto r = check.apply({{axis.name, *v}}, "sweep");
      if (!r.ok) throw InputError(describe(field, r.error));
    }
  }
  for (const auto& [name, value] : fixed_knobs) {
    if (names.count(name)) throw InputError(describe("knobs." + name, "is also a grid axis; give it in one place"));
    KnobRegistry check;
    const auto r = check.apply({{name, value}}, "sweep");
    if (!r.ok) throw InputError(describe("knobs." + name, r.error));
  }
  if (seeds.empty()) throw InputError(describe("seeds", "expected at least one seed"));
  if (traces.size() > 1 && seeds.size() != traces.size())
    throw InputError(describe(
        "seeds", std::to_string(traces.size()) + " recorded runs are as many replicates, paired by position: give " +
                     std::to_string(traces.size()) + " seeds (or none), got " + std::to_string(seeds.size())));
  if (std::set<std::uint64_t>(seeds.begin(), seeds.end()).size() != seeds.size())
    throw InputError(describe("seeds", "a seed is listed twice; runs pair up by seed"));
  for (const auto& [axis, value] : baseline) {
    const auto it = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.name == axis; });
    if (it == axes.end()) throw InputError(describe("baseline." + axis, "'" + axis + "' is not a grid axis"));
    if (std::none_of(it->values.begin(), it->values.end(),
                     [&](const std::string& v) { return sameValue(axis, v, value); }))
      throw InputError(describe("baseline." + axis, "'" + value + "' is not among the grid's values of " + axis));
  }
  if (!(level > 0 && level < 1)) throw InputError(describe("level", "expected a significance level in (0, 1)"));
  if (duration_s && !(*duration_s > 0 && *duration_s <= 30 * 86400.0))
    throw InputError(describe("duration_s", "expected simulated seconds in (0, 30 days]"));
  if (max_inflight_sessions && (*max_inflight_sessions < 0 || *max_inflight_sessions > 1000000000))
    throw InputError(describe("max_inflight_sessions", "expected a whole number of sessions in [0, 1e9]"));
  if (wall_deadline_s && !(*wall_deadline_s >= 0 && *wall_deadline_s <= 30 * 86400.0))
    throw InputError(describe("wall_deadline_s", "expected simulated seconds in [0, 30 days]"));
  // Each point's combined knob set (scenario + fixed + grid) must prepare: a run must not fail later.
  for (const auto& point : points()) {
    try {
      prepareRun(base, optionsFor(point, seeds.front()));
    } catch (const InputError& e) {
      throw InputError(describe("grid", "point " + point.label() + ": " + e.what()));
    }
  }
}

}  // namespace kvscope
