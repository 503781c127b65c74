#pragma once
// A recorded run's traffic as a workload the twin can run: `simulate --trace run.kvrec` replays the
// run's own sessions, turn by turn, under any policy or knobs (docs/ARCHITECTURE.md "Recordings as
// workloads"). Per request it takes what the run recorded:
//   - a twin run's routes carry each request's shape (RequestShape: sizes, due time, think time,
//     prompt layout, the session's turn count), so the same policy, knobs and seed run it again
//     decision for decision;
//   - a live run (serve --live, serve --router, import) has what its engines and router reported:
//     sessions, turns, input and output tokens, the cached tokens per turn, arrival and end times.
//     Arrivals become trace times and the gap after the previous turn's end its think time; where no
//     block hashes were seen, each session gets a prefix chain that reuses exactly the tokens the
//     engine reported cached per turn (said in `Workload::modelled`).
// The run's dispatch, offered requests and trace window come with it (Workload::times_final).
#include <map>
#include <string>

#include "core/events/Event.h"
#include "core/model/Workload.h"

namespace kvscope {

class RecordingWorkload : public EventSink {
 public:
  // The recording at `path` as a workload; InputError naming the file when it cannot be read or
  // holds no request.
  static Workload read(const std::string& path);
  // `kvscope-cli simulate --trace` and the console take .kvrec files from then on (core's
  // TraceLoader knows no recording format by itself: recordings are a backend file).
  static void registerTraceFormat();

  void onEvent(const Event& e) override;
  // What was fed so far, as a workload (sessions sorted by start, then id).
  Workload finish(const std::string& source) const;

 private:
  struct Seen {
    bool routed = false;  // a route with a shape was seen
    RequestShape shape;
    bool done = false;
    SimTime arrival = -1;  // live: end - e2e
    SimTime end = -1;
    SimTime slip = 0;
    std::int64_t input_tokens = -1, output_tokens = -1, cached_tokens = -1;
  };
  Seen& at(SessionId session, std::int32_t turn);

  RunStarted run_;
  bool have_run_ = false;
  std::map<SessionId, std::map<std::int32_t, Seen>> sessions_;
  std::map<RequestId, std::pair<SessionId, std::int32_t>> requests_;
};

}  // namespace kvscope
