#pragma once
// A scenario: cluster shape, hardware profile, workload, policy, knobs, faults, duration, seed.
// One human-editable JSON file each (comments allowed); bundled ones live in resources/scenarios/.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/events/Event.h"
#include "core/scenario/HardwareProfile.h"
#include "core/workload/SyntheticAgenticGenerator.h"

namespace kvscope {

enum class ReplayMode { OpenLoop, ClosedLoop };

struct WorkloadSpec {
  enum class Kind { Synthetic, Trace } kind = Kind::Synthetic;
  SyntheticAgenticSpec synthetic;
  std::string trace_path;           // file or directory (relative paths: to the scenario file)
  bool lenient = false;
  ReplayMode replay = ReplayMode::ClosedLoop;
  double time_scale = 1.0;          // open loop: arrival times are multiplied by this
  double session_start_window_s = 0;  // closed loop traces: sessions start spread over this window
  long max_sessions = 0;            // 0 = all sessions of the trace
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
