// A recorded run as a twin input at production size (issue 49's speed target: a one-hour, 64-D
// recording turned into a workload and replayed in under 2 s). Records one simulated hour of the
// many-workers scenario (16 P + 64 D, 1,000 agentic sessions) to a temporary .kvrec, then times,
// several times over: reading it into a workload (RecordingWorkload::read), the twin replaying that
// workload with the run's own policy and knobs, and both together. Prints the recording's size, the
// requests, and min / median / max wall seconds of each step.
//
//   bench_recording_workload [--decode 64] [--duration 3600] [--repeat 5]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/recording/EventRecorder.h"
#include "backend/recording/RecordingWorkload.h"
#include "bench/BenchStats.h"
#include "bench/PeakRss.h"
#include "core/run/HugePageHeap.h"
#include "core/run/SimulationRun.h"

using namespace kvscope;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Scenario manyWorkers(int decode, double duration_s) {
  Scenario s = Scenario::load("many-workers");
  s.decode_workers = decode;
  s.prefill_workers = std::clamp(decode / 4, 1, kMaxPrefillWorkers);
  s.workload.synthetic.sessions = std::max(1, static_cast<int>(1000.0 * decode / 64.0 + 0.5));
  s.duration_s = duration_s;
  return s;
}

void row(const char* what, bench::Stats& s) {
  std::printf("%-34s min %6.3f  median %6.3f  max %6.3f s  (n=%zu)\n", what, s.pct(0), s.pct(50), s.max(), s.v.size());
}

}  // namespace

int main(int argc, char** argv) {
  relaunchWithHugePageHeap(argv);  // as kvscope-cli does
  int decode = 64, repeat = 5;
  double duration = 3600;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--decode" && has_value) {
      decode = std::stoi(argv[++i]);
    } else if (a == "--duration" && has_value) {
      duration = std::stod(argv[++i]);
    } else if (a == "--repeat" && has_value) {
      repeat = std::stoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--decode 64] [--duration SIMULATED_S] [--repeat N]\n", argv[0]);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (decode < 1 || decode > kMaxWorkers || duration <= 0 || repeat < 1) {
    std::fprintf(stderr, "expected 1..%d decode workers, a duration > 0 and a repeat >= 1\n", kMaxWorkers);
    return 2;
  }
  RecordingWorkload::registerTraceFormat();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("bench_recording_workload." + std::to_string(getpid()) + ".kvrec");
  const Scenario scenario = manyWorkers(decode, duration);
  {
    EventRecorder recorder(path.string());
    SimulationOptions o;
    o.sinks.push_back(&recorder);
    const auto t0 = std::chrono::steady_clock::now();
    const RunSummary s = runSimulation(scenario, o);
    std::string error;
    if (!recorder.close(&error)) {
      std::fprintf(stderr, "recording: %s\n", error.c_str());
      return 1;
    }
    std::printf("recorded: %d P + %d D, %.0f simulated s, %ld requests, %.1f MiB on disk, %.2f s to record\n",
                scenario.prefill_workers, scenario.decode_workers, s.sim_seconds, s.total,
                static_cast<double>(std::filesystem::file_size(path)) / (1 << 20), secondsSince(t0));
  }
  bench::Stats read, replay, both;
  std::size_t sessions = 0, requests = 0;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Workload w = RecordingWorkload::read(path.string());
    read.add(secondsSince(t0));
    sessions = w.sessions.size();
    requests = 0;
    for (const auto& s : w.sessions) requests += s.turns.size();
    // The replay as `simulate --trace run.kvrec` runs it: it reads the recording itself, so the
    // whole is timed and the replay alone is that less the read just measured.
    const auto t1 = std::chrono::steady_clock::now();
    SimulationOptions o;
    o.trace = path.string();
    runSimulation(scenario, o);
    both.add(secondsSince(t1));
    replay.add(both.v.back() - read.v.back());
  }
  std::printf("workload: %zu sessions, %zu requests\n", sessions, requests);
  row("recording -> workload", read);
  row("replay (twin, same policy)", replay);
  row("read + replay (simulate --trace)", both);
  std::printf("peak RSS %.0f MiB\n", bench::peakRssMiB());
  std::filesystem::remove(path);
  return 0;
}
