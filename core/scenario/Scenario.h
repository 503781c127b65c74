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
  double time_scale = 1.0;         // trace times (arrivals, turn offsets) are multiplied by this
  long max_inflight_sessions = 0;  // sessions in flight at once, the rest wait in start order (0 = no cap)
  // Requests in flight at once, the rest wait in the order they became ready (0 = no cap): a
  // replayer's request semaphore (the lab's E-series `concurrency_limit 32`), which a session gives
  // back between its turns where the session cap holds it to the last.
  long max_inflight_requests = 0;
  double wall_deadline_s = 0;         // requests not done by then fail and the run ends (0 = none)
  double session_start_window_s = 0;  // closed loop traces: sessions start spread over this window
  long max_sessions = 0;              // 0 = all sessions of the trace
  // The engines' caches at the start: empty (""), or what a run of the same workload under this
  // policy left in them, as when a sweep's arms share instances that are not restarted between
  // arms (the lab's B3 sweep ran lmetric, load_only and sticky warm: its interns' todo @ 0c3220c).
  std::string warm_start_policy;
};

// How a disaggregated cluster moves a turn from P to D (ARCHITECTURE.md D2):
//   sglang  SGLang's PD with the lab's session cache (agentic-pd-hybrid): a resident session appends
//           on D directly; D admits or rejects a seed; D preallocates within Mooncake's handshake
//           window or P marks it dead; the least busy P prefills.
//   vllm    vLLM's MooncakeConnector (agentic-kvc's static splits): every turn is prefilled on the P
//           its session hashes to (the lab's proxy: one producer per session), using P's prefix
//           cache; D queues it until its KV fits (no reject), then pulls what its own cache lacks;
//           no liveness blacklist. A request fails on the client's timeout.
enum class Connector : std::uint8_t { Sglang, Vllm };

struct Scenario {
  std::string name;
  std::string description;
  std::string file;  // where it was loaded from
  HardwareProfile profile;
  int prefill_workers = 1;
  int decode_workers = 3;
  bool disaggregated = true;
  Connector connector = Connector::Sglang;
  // vLLM's consumer EngineCore crash as the lab recorded it (agentic-kvc 2e6a369, PD_DISAGG_RESULTS
  // 5.1): a pull into a D whose pool is at least this full fails (Mooncake returns -1, the request
  // fails under kv_load_failure_policy=fail), a counter goes negative and the engine dies for the rest
  // of the run. 0 = off (the lab's clamp patch, 3957c2d, landed before its static-split sweep).
  double consumer_crash_kv_fraction = 0;
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
