#pragma once
// One interface for every place a run comes from (ARCHITECTURE.md "The data flow", as cabana's
// AbstractStream): the embedded simulation, a remote `kvscope-cli serve`, a recording, the live
// cluster. Producers fill the staging buffer on their own thread; the GUI drains it on its frame
// timer and polls status(). What an operator can do to the run is its RunControl, the same
// vocabulary the Control RPC serves; results come back through callbacks on any thread.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/knobs/KnobRegistry.h"
#include "core/model/Ids.h"
#include "core/run/RunControl.h"
#include "core/run/WhatIfPreview.h"
#include "core/source/StagingBuffer.h"

namespace kvscope {

struct SourceCapabilities {
  bool pause = false;
  bool speed = false;
  bool seek = false;     // recordings only
  bool knobs = false;    // knob and policy changes
  bool preview = false;  // what-if previews (a simulation, embedded or served)
};

enum class SourceState { Starting, Connecting, Running, Paused, Finished, Disconnected, Failed };
const char* toString(SourceState);

struct SourceStatus {
  SourceState state = SourceState::Starting;
  std::string detail;  // e.g. the connection error, "reconnecting in 2 s", a damaged tail warning
  SimTime time = 0;    // the run's current time
  SimTime end = 0;     // the run's end (0 when unknown)
  double speed = 0;    // x real time; 0 = as fast as possible
  // Per worker name, the health a live cluster's scrapers see ("ok", "unreachable: connection
  // refused"; "" = not known yet): from the live session, or from WorkerHealthChanged events when the
  // cluster is served elsewhere. Empty for simulations.
  std::map<std::string, std::string> worker_health;
};

// "ok", "degraded: HTTP 500", ... or "" for Unknown: SourceStatus::worker_health's text.
std::string workerHealthText(WorkerHealth health, const std::string& reason);

// Who the console's changes are attributed to in the event stream: "console@$USER".
std::string consoleAuthor();

class Source {
 public:
  virtual ~Source() = default;
  virtual std::string description() const = 0;  // "simulation e3-load-floor", "recording run.kvrec", ...
  virtual SourceCapabilities capabilities() const = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual SourceStatus status() const = 0;

  // The run's controls (knobs, policy, pause, resume, speed, seek; capabilities() says which make
  // sense here), or null while there is no run to control yet. A seek restarts the staging buffer
  // with a Snapshot at the new time.
  virtual RunControl* control() const { return nullptr; }

  // A what-if preview of `change` over the next `horizon`, forked at `change.time` (an embedded run;
  // a served run forks at its own current time). `done` runs once, on any thread, with the result or
  // the reason there is none; setting `*cancel` drops a preview nobody waits for any more (`done`
  // may then never run).
  using PreviewDone = std::function<void(std::shared_ptr<WhatIfResult> result, std::string error)>;
  virtual void preview(ControlStep change, SimTime horizon, std::shared_ptr<std::atomic<bool>> cancel,
                       PreviewDone done) {
    (void)change, (void)horizon, (void)cancel;
    done(nullptr, "no preview here: only a simulation can be forked");
  }

  // The whole run's discrete events (evictions, seeds, crashes, link changes, ...) when they are
  // known up front, as a recording's are; null for live sources. Drives the replay scrubber's
  // density and "jump to the next crash".
  virtual std::shared_ptr<const std::vector<Event>> overview() const { return nullptr; }

  StagingBuffer& staging() { return staging_; }

 protected:
  StagingBuffer staging_;
};

}  // namespace kvscope
