#pragma once
// A scenario: cluster shape, hardware profile, workload, policy, knobs, faults, duration, seed.
// One human-editable JSON file each (comments allowed); bundled ones live in resources/scenarios/.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/events/Event.h"
#include "core/scenario/HardwareProfile.h"
#include "core/workload/SyntheticAgenticGenerator.h"

namespace kvscope {

// When a workload's turns are fired (the lab's replayer: LAB_CODE.md 2.3, gahow/agentic-kvc
// replayer/replay.py `--dispatch-mode`):
//   open       every turn at its own trace time, whether its previous turn finished or not
//   closed     a session's next turn its think time after the previous one finished; a trace's
//              sessions may start spread over session_start_window_s
//   tracets    turn k at max(previous turn finished, its trace time): the lab's default mode
//   thinktime  turn 1 at its trace time, turn k its think time after the previous one finished
//   burst      every session's first turn at t = 0, each next turn when the previous one finishes:
//              the E-series' 1,285 requests of 50 sessions "all at t=0"
// In every mode but open a session's turns are sequential, and a failed turn ends its wait too
// (the lab counts failed requests and goes on: its runs account for every request).
enum class Dispatch : std::uint8_t { Open, Closed, TraceTs, ThinkTime, Burst };
const char* toString(Dispatch d);
std::optional<Dispatch> parseDispatch(std::string_view text);
inline constexpr const char* kDispatchNames = "open, closed, tracets, thinktime or burst";

struct WorkloadSpec {
  enum class Kind { Synthetic, Trace } kind = Kind::Synthetic;
  SyntheticAgenticSpec synthetic;
  std::string trace_path;  // file or directory (relative paths: to the scenario file)
  bool lenient = false;
  Dispatch dispatch = Dispatch::Closed;
  double time_scale = 1.0;            // trace times (arrivals, turn offsets) are multiplied by this
  long max_inflight_sessions = 0;     // sessions in flight at once, the rest wait in start order (0 = no cap)
  double wall_deadline_s = 0;         // requests not done by then fail and the run ends (0 = none)
  double session_start_window_s = 0;  // closed loop traces: sessions start spread over this window
  long max_sessions = 0;              // 0 = all sessions of the trace
};

struct Scenario {
  std::string name;
  std::string description;
  std::string file;  // where it was loaded from
  HardwareProfile profile;
  int prefill_workers = 1;
  int decode_workers = 3;
  bool disaggregated = true;
  int block_size = 24;
  EvictionGranularity eviction = EvictionGranularity::Session;
  CorrectionFault correction_fault = CorrectionFault::Drop;
  std::string policy = "kv-aware";
  std::map<std::string, double> knobs;
  double duration_s = 3600;
  std::uint64_t seed = 1;
  double snapshot_interval_s = 1.0;
  WorkloadSpec workload;

  // NAME (a bundled scenario) or a path to a .json file. Throws InputError naming file and field.
  static Scenario load(const std::string& name_or_path);
  // The pieces of load(), for a caller that edits the JSON before it becomes a scenario (calibrate
  // fit): the file NAME_OR_PATH means, its JSON (comments allowed), and the scenario of a JSON object
  // (relative paths in it resolve against `path`'s folder; errors name `path`).
  static std::string resolve(const std::string& name_or_path);
  static nlohmann::json readJson(const std::string& path);
  static Scenario fromJson(const nlohmann::json& j, const std::string& path);
  static std::vector<std::string> bundledNames();
  static std::string scenarioDir();
};

}  // namespace kvscope
