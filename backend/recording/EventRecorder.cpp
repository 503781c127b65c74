#include "backend/recording/EventRecorder.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "backend/convert/EventConvert.h"
#include "backend/recording/KvrecWriter.h"
#include "core/io/AtomicFile.h"
#include "kvscope/v1/events.pb.h"
#include "kvscope/v1/recording.pb.h"

namespace kvscope {

EventRecorder::EventRecorder(std::string path, double keyframe_interval_s)
    : path_(std::move(path)), keyframe_interval_(secondsToTime(keyframe_interval_s)) {
  std::string why;
  fd_ = AtomicFile::openForWrite(path_, &why);
  if (fd_ < 0) error_ = "cannot create recording " + why;
}

EventRecorder::~EventRecorder() {
  std::string ignored;
  close(&ignored);
}

void EventRecorder::onEvent(const Event& e) {
  if (!error_.empty()) return;
  if (!writer_) {
    const auto* run = std::get_if<RunStarted>(&e.payload);
    if (!run) return;  // nothing to record before the run starts
    v1::RecordingHeader header;
    header.set_format_version(1);
    toProto(*run, header.mutable_run());
    header.set_build_version(KVSCOPE_VERSION);
    header.set_created_unix_ms(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    header.set_keyframe_interval_s(timeToSeconds(keyframe_interval_));
    writer_ = KvrecWriter::adopt(path_, fd_, header.SerializeAsString(), &error_);
    fd_ = -1;
    if (!writer_) return;
  }
  v1::Event proto;
  toProto(e, &proto);
  buffer_.clear();
  proto.SerializeToString(&buffer_);
  // Snapshots carry every gauge: one every keyframe interval is where a seek can start.
  const bool keyframe = std::holds_alternative<Snapshot>(e.payload) &&
                        (last_keyframe_ < 0 || e.time - last_keyframe_ >= keyframe_interval_);
  if (keyframe) last_keyframe_ = e.time;
  if (!writer_->append(e.seq, e.time, keyframe, buffer_)) {
    error_ = path_ + ": " + writer_->error();
    // Said at once (a full disk mid-session), not only when the recording is closed at exit.
    std::fprintf(stderr, "kvscope: error: recording failed at event %llu, nothing after it is recorded: %s\n",
                 static_cast<unsigned long long>(e.seq), error_.c_str());
  }
}

void EventRecorder::flush() {
  if (!writer_ || !error_.empty()) return;
  std::string why;
  if (!writer_->flush(&why)) {
    error_ = path_ + ": " + why;
    std::fprintf(stderr, "kvscope: error: recording failed, nothing after this is recorded: %s\n", error_.c_str());
  }
}

bool EventRecorder::close(std::string* error) {
  if (writer_) {
    std::string close_error;
    if (!writer_->close(&close_error) && error_.empty()) error_ = close_error;
    writer_.reset();
  } else if (error_.empty() && !path_.empty()) {
    error_ = path_ + ": nothing was recorded (the run never started)";
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  path_.clear();  // closed: a second close reports nothing new
  if (!error_.empty() && error) *error = error_;
  return error_.empty();
}

}  // namespace kvscope
