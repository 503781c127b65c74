#include "core/sweep/RecordedRunSet.h"
#include "core/model/NumberText.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace kvscope {

namespace {

struct Config {
  std::string scenario, policy;
  std::map<std::string, double> knobs;
  bool operator==(const Config&) const = default;
};

Config configOf(const RecordedRun& r) {
  Config c{r.run.scenario, r.run.policy, {}};
  for (const auto& [k, v] : r.run.knobs) c.knobs[k] = v;
  return c;
}

// Same configuration, same seed: nothing tells the runs apart but their files. Each file is its own
// point, at its run's seed.
void arrangeByFile(SweepData& d, const std::vector<RecordedRun>& runs) {
  d.paired = false;
  d.notes.push_back("recordings share a configuration and a seed: each file is its own point, unpaired");
  std::set<std::uint64_t> all;
  for (const auto& r : runs) all.insert(r.run.seed);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    SweepPoint p;
    p.coords.emplace_back("file", std::filesystem::path(runs[i].file).filename().string());
    p.policy = runs[i].run.policy;
    d.points.push_back(p);
  }
  d.seeds.assign(all.begin(), all.end());
  d.runs.assign(runs.size(), std::vector<std::optional<RunSummary>>(d.seeds.size()));
  d.recordings.assign(runs.size(), std::vector<std::string>(d.seeds.size()));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto k =
        static_cast<std::size_t>(std::find(d.seeds.begin(), d.seeds.end(), runs[i].run.seed) - d.seeds.begin());
    d.runs[i][k] = runs[i].summary;
    d.recordings[i][k] = runs[i].file;
  }
}

// The knobs whose values (or presence) differ between the configurations, by name.
std::vector<std::string> differingKnobs(const std::vector<Config>& configs) {
  std::set<std::string> knob_names;
  for (const auto& c : configs)
    for (const auto& [k, v] : c.knobs) knob_names.insert(k);
  std::vector<std::string> differing_knobs;
  for (const auto& k : knob_names) {
    std::set<std::string> values;
    for (const auto& c : configs) values.insert(c.knobs.count(k) ? compactText(c.knobs.at(k)) : "-");
    if (values.size() > 1) differing_knobs.push_back(k);
  }
  return differing_knobs;
}

}  // namespace

SweepData RecordedRunSet::arrange(const std::vector<RecordedRun>& runs, double level) {
  SweepData d;
  d.heading = "Comparison";
  d.level = level;
  d.baseline = 0;
  if (runs.empty()) return d;
  std::vector<Config> configs;
  std::vector<std::vector<std::size_t>> members;  // [point] -> indices into runs
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Config c = configOf(runs[i]);
    const auto it = std::find(configs.begin(), configs.end(), c);
    if (it == configs.end()) {
      configs.push_back(c);
      members.push_back({i});
    } else {
      members[static_cast<std::size_t>(it - configs.begin())].push_back(i);
    }
  }
  bool duplicate_seed = false;
  for (const auto& m : members) {
    std::set<std::uint64_t> seeds;
    for (std::size_t i : m) duplicate_seed |= !seeds.insert(runs[i].run.seed).second;
  }
  std::set<std::string> scenarios;
  for (const auto& c : configs) scenarios.insert(c.scenario);
  d.scenario.clear();
  for (const auto& s : scenarios) d.scenario += (d.scenario.empty() ? "" : " + ") + s;

  if (duplicate_seed) {
    arrangeByFile(d, runs);
    return d;
  }

  // Name each point by what differs between the points.
  const bool scenario_differs = scenarios.size() > 1;
  bool policy_differs = false;
  for (const auto& c : configs) policy_differs |= c.policy != configs.front().policy;
  const std::vector<std::string> differing_knobs = differingKnobs(configs);
  std::set<std::uint64_t> all_seeds;
  for (const auto& r : runs) all_seeds.insert(r.run.seed);
  d.seeds.assign(all_seeds.begin(), all_seeds.end());
  d.runs.assign(configs.size(), std::vector<std::optional<RunSummary>>(d.seeds.size()));
  d.recordings.assign(configs.size(), std::vector<std::string>(d.seeds.size()));
  d.paired = configs.size() > 1;
  for (std::size_t p = 0; p < configs.size(); ++p) {
    SweepPoint point;
    if (scenario_differs) point.coords.emplace_back("scenario", configs[p].scenario);
    if (policy_differs || (!scenario_differs && differing_knobs.empty()))
      point.coords.emplace_back("policy", configs[p].policy);
    for (const auto& k : differing_knobs)
      point.coords.emplace_back(k, configs[p].knobs.count(k) ? compactText(configs[p].knobs.at(k)) : "-");
    point.policy = configs[p].policy;
    for (const auto& k : differing_knobs)
      if (configs[p].knobs.count(k)) point.knobs[k] = configs[p].knobs.at(k);
    d.points.push_back(point);
    std::set<std::uint64_t> seeds;
    for (std::size_t i : members[p]) {
      seeds.insert(runs[i].run.seed);
      const auto k =
          static_cast<std::size_t>(std::find(d.seeds.begin(), d.seeds.end(), runs[i].run.seed) - d.seeds.begin());
      d.runs[p][k] = runs[i].summary;
      d.recordings[p][k] = runs[i].file;
    }
    if (seeds != all_seeds) d.paired = false;
  }
  if (configs.size() > 1)
    d.notes.push_back(d.paired ? "paired by seed: every point has a recording for each seed"
                               : "unpaired: the points do not have recordings for the same seeds");
  return d;
}

}  // namespace kvscope
