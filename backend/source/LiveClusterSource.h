#pragma once
// A Source over a live cluster (`kvscope --live cluster.yaml`): the same
// LiveSession `kvscope-cli serve --live` runs, with the console's staging buffer as its sink.
// A real cluster cannot be paused, sped up or sought from here, so those capabilities are off;
// knobs and policy belong to the router core, so they are on only when the cluster file has a
// `router:` section. The workers' health (which the event stream does not carry) reaches the
// console through status(): the detail names every worker that is degraded or unreachable and
// every log file that cannot be read, and worker_health holds each worker's state for the panels.
#include <memory>
#include <string>

#include "backend/live/LiveSession.h"
#include "core/live/ClusterConfig.h"
#include "core/source/RunControlSource.h"

namespace kvscope {

class LiveClusterSource : public RunControlSource {
 public:
  // Loads the cluster file; throws InputError naming the file, line and field on a bad one,
  // before anything runs.
  explicit LiveClusterSource(const std::string& cluster_file);
  LiveClusterSource(ClusterConfig config, LiveSession::Options options);
  ~LiveClusterSource() override;

  std::string description() const override;
  SourceCapabilities capabilities() const override;
  SourceStatus status() const override;
  void start() override;
  void stop() override;

  LiveSession& session() { return *session_; }

  RunControl* control() const override { return session_.get(); }

 protected:
  bool finished() const override { return stopped_; }

 private:
  std::string name_;
  std::unique_ptr<LiveSession> session_;
  bool started_ = false, stopped_ = false;  // GUI thread only
};

}  // namespace kvscope
