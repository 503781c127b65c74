#pragma once
// What a sweep runs: a scenario, a grid of policy and knob values, the seeds every grid point runs
// (the same list for every point, so runs pair up by seed), the baseline point, how many runs at once,
// and the significance level of the verdicts. Built from `kvscope-cli sweep` flags or a sweep file
// (SweepFile), and validated as a whole before any run starts.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/run/SimulationRun.h"
#include "core/sweep/SweepPoint.h"

namespace kvscope {

struct SweepAxis {
  std::string name;                 // "policy", "dispatch" or a knob of the KnobRegistry
  std::vector<std::string> values;  // as written (a knob's values parse as numbers)
};

struct SweepSpec {
  std::string scenario = "e3-load-floor";
  std::vector<SweepAxis> axes;  // the first axis varies slowest
  std::vector<std::uint64_t> seeds;
  std::vector<std::pair<std::string, std::string>> baseline;  // axis -> value; unnamed axes: their first value
  std::map<std::string, double> fixed_knobs;                  // the same at every point (--set)
  std::optional<double> duration_s;                           // overrides the scenario's
  // The workload's dispatch for every run (a `dispatch` axis overrides it per point), its cap on
  // sessions in flight and its wall deadline; empty: the scenario's.
  std::optional<Dispatch> dispatch;
  std::optional<long> max_inflight_sessions;
  std::optional<double> wall_deadline_s;
  // Traces or recordings the runs replay instead of the scenario's workload (a recorded run: the
  // counterfactual of that night's traffic under each point); empty: the scenario's. One: every run
  // replays it. Several (recorded runs of one setup, e.g. a live sweep's seeds): each is one
  // replicate, paired across points by its position, so seeds[i] replays traces[i] and the sweep's
  // statistics are over the recorded runs (validate() wants as many seeds as traces).
  std::vector<std::string> traces;
  const std::string& traceFor(std::uint64_t seed) const;
  unsigned jobs = 0;    // runs at once; 0 = the core count
  double level = 0.05;  // significance level of the verdicts

  // Where the spec came from, so errors point at it: empty for the command line, else the sweep
  // file and the line of each field ("grid.K", "seeds", ...).
  std::string file;
  std::map<std::string, long> lines;

  // Every grid point, the cartesian product of the axes (the last axis varies fastest).
  std::vector<SweepPoint> points() const;
  // Index into points() of the baseline point (call validate() first).
  std::size_t baselineIndex() const;
  // What `simulate` would be given for this point and seed: the same runs, the same summaries.
  SimulationOptions optionsFor(const SweepPoint& point, std::uint64_t seed) const;
  unsigned effectiveJobs() const;

  // Checks everything before any run: the scenario, every axis (known knob or policy, values in
  // range, not empty, no repeats), the seeds, the baseline, the fixed knobs, the level, and that every
  // point prepares (its combined knob set is valid). Throws InputError naming the flag or the file,
  // line and field.
  void validate() const;

  // An error message about `field` ("grid.K", "seeds", ...): "FILE:LINE: field 'grid.K': ..." for a
  // file, "--grid K: ..." for the command line.
  std::string describe(const std::string& field, const std::string& what) const;

  // Command-line pieces. --grid "K=0,50,100" or "policy=a,b" (values may not be empty);
  // --seeds "5" (seeds 1..5) or "3,7,11" (that list; "7," is the single seed 7);
  // --baseline "policy=kv-aware,K=0". Throw InputError naming the flag.
  static SweepAxis parseGrid(const std::string& text);
  static std::vector<std::uint64_t> parseSeeds(const std::string& text);
  static std::vector<std::pair<std::string, std::string>> parseBaseline(const std::string& text);
};

}  // namespace kvscope
