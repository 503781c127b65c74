#pragma once
// A `.kvrec` recording replayed in the console: play, pause, speed (x the recorded time) and seek.
// A damaged recording opens with what is readable and a warning in the status.
#include <memory>

#include "backend/recording/RecordingReplay.h"
#include "core/source/RunControlSource.h"

namespace kvscope {

class RecordingSource : public RunControlSource {
 public:
  // Throws InputError naming the file when it is not a readable recording.
  explicit RecordingSource(const std::string& path, double speed = 10);
  ~RecordingSource() override;

  std::string description() const override;
  const std::string& path() const { return path_; }  // the recording's file, as given
  void start() override;
  void stop() override;
  const RecordingDamage& damage() const { return replay_->damage(); }
  std::shared_ptr<const std::vector<Event>> overview() const override { return overview_; }
  RecordingReplay& replay() { return *replay_; }

  RunControl* control() const override { return replay_.get(); }

 protected:
  bool finished() const override { return replay_->atEnd(); }

 private:
  std::string path_, name_;
  double speed_;
  std::unique_ptr<RecordingReplay> replay_;
  std::shared_ptr<const std::vector<Event>> overview_;
  bool started_ = false;
};

}  // namespace kvscope
