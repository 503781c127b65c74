#include "core/sweep/SweepFile.h"
#include "core/io/InputFile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/model/Error.h"
#include "core/model/JsonKeys.h"

namespace kvscope {

namespace {

using ojson = nlohmann::ordered_json;  // the grid's axes keep the file's order

long lineAt(const std::string& text, std::size_t pos) {
  return 1 + static_cast<long>(
                 std::count(text.begin(), text.begin() + static_cast<long>(std::min(pos, text.size())), '\n'));
}

// The line of a key ("grid.K": the "K" after the "grid"): the first `"name"` followed by a colon.
// nlohmann::json keeps no positions, and a user needs the line more than a byte offset.
long lineOfKey(const std::string& text, const std::string& dotted) {
  std::size_t pos = 0;
  std::stringstream parts(dotted);
  std::string part;
  while (std::getline(parts, part, '.')) {
    const std::string quoted = "\"" + part + "\"";
    std::size_t at = pos;
    while ((at = text.find(quoted, at)) != std::string::npos) {
      const auto after = text.find_first_not_of(" \t\r\n", at + quoted.size());
      if (after != std::string::npos && text[after] == ':') break;
      at += quoted.size();
    }
    if (at == std::string::npos) return 0;
    pos = at;
  }
  return lineAt(text, pos);
}

std::string valueText(const ojson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == std::floor(d) && std::abs(d) < 1e15) return std::to_string(static_cast<long long>(d));
    std::ostringstream os;
    os << d;
    return os.str();
  }
  return v.dump();
}

// The file as JSON, a syntax error named with its line.
ojson parseJson(const std::string& text, const std::string& path) {
  try {
    return ojson::parse(text, rejectDuplicateKeys<ojson>(), /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const ojson::parse_error& e) {
    throw InputError(formatInputError(path, lineAt(text, e.byte > 0 ? e.byte - 1 : 0), "",
                                      std::string("invalid JSON: ") + e.what()));
  } catch (const DuplicateJsonKey& e) {
    throw InputError(formatInputError(path, 0, e.key(), "given twice in one object; say it once"));
  }
}

// A mistake in a field, named with the field and its line in the file.
struct FieldErrors {
  SweepSpec& s;
  const std::string& text;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    if (!s.lines.count(field)) s.lines[field] = lineOfKey(text, field);
    throw InputError(s.describe(field, what));
  }
};

// "grid": the axes, each a list of knob values (numbers) or policy names, in the file's order.
void readGrid(const ojson& grid, const FieldErrors& e) {
  SweepSpec& s = e.s;
  if (!grid.is_object()) e.fail("grid", "expected an object of axes, e.g. { \"K\": [0, 200] }");
  for (const auto& [name, values] : grid.items()) {
    const std::string field = "grid." + name;
    s.lines[field] = lineOfKey(e.text, field);
    if (!values.is_array()) e.fail(field, "expected a list of values, got " + values.dump());
    SweepAxis axis{name, {}};
    for (const auto& v : values) {
      if (!v.is_string() && !v.is_number())
        e.fail(field, "expected numbers (a knob) or names (policy), got " + v.dump());
      axis.values.push_back(valueText(v));
    }
    s.axes.push_back(std::move(axis));
  }
}

// "seeds": a count (seeds 1..N) or a list of seeds.
void readSeeds(const ojson& v, const FieldErrors& e) {
  SweepSpec& s = e.s;
  if (v.is_number_unsigned() || v.is_number_integer()) {
    const long long count = v.get<long long>();
    if (count < 1 || count > 100000) e.fail("seeds", "expected a count in [1, 100000] or a list, got " + v.dump());
    for (long long k = 1; k <= count; ++k) s.seeds.push_back(static_cast<std::uint64_t>(k));
  } else if (v.is_array()) {
    for (const auto& x : v) {
      if (!x.is_number_unsigned() && !(x.is_number_integer() && x.get<long long>() >= 0))
        e.fail("seeds", "expected whole numbers >= 0, got " + x.dump());
      s.seeds.push_back(x.get<std::uint64_t>());
    }
  } else {
    e.fail("seeds", "expected a count or a list of seeds, got " + v.dump());
  }
}

// "knobs": knob values every run of the sweep gets.
void readKnobs(const ojson& knobs, const FieldErrors& e) {
  SweepSpec& s = e.s;
  if (!knobs.is_object()) e.fail("knobs", "expected an object of knob values");
  for (const auto& [name, value] : knobs.items()) {
    s.lines["knobs." + name] = lineOfKey(e.text, "knobs." + name);
    if (!value.is_number()) e.fail("knobs." + name, "expected a number, got " + value.dump());
    s.fixed_knobs[name] = value.get<double>();
  }
}

}  // namespace

SweepSpec SweepFile::load(const std::string& path) { return parse(InputFile::readAll(path), path); }

SweepSpec SweepFile::parse(const std::string& text, const std::string& path) {
  const ojson j = parseJson(text, path);
  SweepSpec s;
  s.file = path;
  if (!j.is_object()) throw InputError(formatInputError(path, 1, "", "expected a JSON object (see `sweep --help`)"));
  static constexpr const char* kKeys[] = {"scenario",        "grid",       "seeds",    "baseline",
                                          "knobs",           "duration_s", "dispatch", "max_inflight_sessions",
                                          "wall_deadline_s", "trace",      "jobs",     "level"};
  for (const auto& [key, value] : j.items()) {
    s.lines[key] = lineOfKey(text, key);
    if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }))
      throw InputError(s.describe(key,
                                  "unknown field; expected one of: scenario, grid, seeds, baseline, knobs, "
                                  "duration_s, dispatch, max_inflight_sessions, wall_deadline_s, trace, jobs, level"));
  }
  const FieldErrors errors{s, text};
  const auto fail = [&](const std::string& field, const std::string& what) { errors.fail(field, what); };
  if (j.contains("scenario")) {
    if (!j["scenario"].is_string()) fail("scenario", "expected a scenario name or file, got " + j["scenario"].dump());
    s.scenario = j["scenario"].get<std::string>();
    // A scenario file named relative to the sweep file, as a scenario's trace is to the scenario.
    const std::filesystem::path beside = std::filesystem::path(path).parent_path() / s.scenario;
    std::error_code ec;
    if (std::filesystem::path(s.scenario).is_relative() && std::filesystem::is_regular_file(beside, ec))
      s.scenario = beside.lexically_normal().string();
  }
  if (j.contains("grid")) readGrid(j["grid"], errors);
  if (j.contains("seeds")) readSeeds(j["seeds"], errors);
  if (j.contains("baseline")) {
    if (!j["baseline"].is_object()) fail("baseline", "expected an object naming a grid point, e.g. { \"K\": 0 }");
    for (const auto& [name, value] : j["baseline"].items()) {
      s.lines["baseline." + name] = lineOfKey(text, "baseline." + name);
      s.baseline.emplace_back(name, valueText(value));
    }
  }
  if (j.contains("knobs")) readKnobs(j["knobs"], errors);
  if (j.contains("duration_s")) {
    if (!j["duration_s"].is_number()) fail("duration_s", "expected simulated seconds, got " + j["duration_s"].dump());
    s.duration_s = j["duration_s"].get<double>();
  }
  if (j.contains("dispatch")) {
    const auto d = j["dispatch"].is_string() ? parseDispatch(j["dispatch"].get<std::string>()) : std::nullopt;
    if (!d) fail("dispatch", std::string("expected ") + kDispatchNames + ", got " + j["dispatch"].dump());
    s.dispatch = d;
  }
  if (j.contains("max_inflight_sessions")) {
    const auto& v = j["max_inflight_sessions"];
    if (!v.is_number_unsigned() || v.get<unsigned long long>() > 1000000000ULL)
      fail("max_inflight_sessions", "expected a whole number of sessions in [0, 1e9], got " + v.dump());
    s.max_inflight_sessions = v.get<long>();
  }
  if (j.contains("wall_deadline_s")) {
    if (!j["wall_deadline_s"].is_number())
      fail("wall_deadline_s", "expected simulated seconds, got " + j["wall_deadline_s"].dump());
    s.wall_deadline_s = j["wall_deadline_s"].get<double>();
  }
  if (j.contains("trace")) {
    // A file, or a list of recorded runs (one replicate each); relative to the sweep file, as a
    // scenario's trace is to the scenario.
    const auto& v = j["trace"];
    const bool list =
        v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_string(); });
    if (!v.is_string() && !list)
      fail("trace", "expected a trace or recording file, or a list of recorded runs, got " + v.dump());
    for (const auto& e : list ? v : ojson::array({v})) {
      const std::filesystem::path given(e.template get<std::string>());
      s.traces.push_back((given.is_relative() ? std::filesystem::path(path).parent_path() / given : given)
                             .lexically_normal()
                             .string());
    }
  }
  if (j.contains("jobs")) {
    const auto& v = j["jobs"];
    if (!v.is_number_unsigned() || v.get<unsigned long long>() < 1 || v.get<unsigned long long>() > 1024)
      fail("jobs", "expected a whole number of parallel runs in [1, 1024], got " + v.dump());
    s.jobs = v.get<unsigned>();
  }
  if (j.contains("level")) {
    if (!j["level"].is_number()) fail("level", "expected a significance level such as 0.05, got " + j["level"].dump());
    s.level = j["level"].get<double>();
  }
  return s;
}

std::string SweepFile::text(const SweepSpec& spec) {
  ojson j;
  std::string scenario = spec.scenario;
  std::error_code ec;
  if (std::filesystem::path(scenario).is_relative() && std::filesystem::is_regular_file(scenario, ec))
    scenario = std::filesystem::absolute(scenario, ec).lexically_normal().string();
  j["scenario"] = scenario;
  // Axis values and the baseline as the strings they were given as: parse() keeps strings as they
  // are, so a knob value such as "0.10" comes back exactly.
  j["grid"] = ojson::object();
  for (const auto& axis : spec.axes) j["grid"][axis.name] = axis.values;
  j["seeds"] = spec.seeds;
  if (!spec.baseline.empty()) {
    j["baseline"] = ojson::object();
    for (const auto& [axis, value] : spec.baseline) j["baseline"][axis] = value;
  }
  if (!spec.fixed_knobs.empty()) j["knobs"] = spec.fixed_knobs;
  if (spec.duration_s) j["duration_s"] = *spec.duration_s;
  if (spec.dispatch) j["dispatch"] = toString(*spec.dispatch);
  if (spec.max_inflight_sessions) j["max_inflight_sessions"] = *spec.max_inflight_sessions;
  if (spec.wall_deadline_s) j["wall_deadline_s"] = *spec.wall_deadline_s;
  if (!spec.traces.empty()) {
    std::vector<std::string> absolute;
    for (const auto& t : spec.traces) {
      std::error_code abs_ec;
      absolute.push_back(std::filesystem::absolute(t, abs_ec).lexically_normal().string());
    }
    if (absolute.size() == 1)
      j["trace"] = absolute.front();
    else
      j["trace"] = absolute;
  }
  if (spec.jobs > 0) j["jobs"] = spec.jobs;
  j["level"] = spec.level;
  return j.dump(2) + "\n";
}

}  // namespace kvscope
