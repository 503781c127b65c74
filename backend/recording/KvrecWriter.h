#pragma once
// Writes a .kvrec recording (layout in KvrecFormat.h) straight to its final path: the header goes to
// the OS at create(), frames are buffered and handed to the OS with write(2) once the oldest
// buffered frame is a second old (checked on append) or the buffer passes 1 MiB, so a kill -9 loses
// at most about the last second of frames. close() adds the keyframe index and the trailer.
// Not thread-safe: one writer, one thread (the recording sink's).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/recording/KvrecFormat.h"

namespace kvscope {

struct KvrecWriterOptions {
  std::chrono::milliseconds flush_interval{1000};  // the most wall time a frame waits in the buffer
  std::size_t buffer_bytes = std::size_t{1} << 20;
  bool sync_on_close = false;  // fsync(2) at close, for recordings that must survive a power cut
};

class KvrecWriter {
 public:
  // Creates (or truncates) `path` (a regular file, or a symlink to one) and writes the header. nullptr with `*error`
  // naming the file on failure.
  static std::unique_ptr<KvrecWriter> create(const std::string& path, std::string_view metadata, std::string* error,
                                             const KvrecWriterOptions& options = {});
  // The same on a file already opened (and locked) by AtomicFile::openForWrite; takes `fd` over.
  static std::unique_ptr<KvrecWriter> adopt(const std::string& path, int fd, std::string_view metadata,
                                            std::string* error, const KvrecWriterOptions& options = {});
  ~KvrecWriter();  // closes (index + trailer) if close() was not called
  KvrecWriter(const KvrecWriter&) = delete;
  KvrecWriter& operator=(const KvrecWriter&) = delete;

  // False (and error() says why) for a payload over kKvrecMaxPayload, a time earlier than the
  // previous frame's, a closed writer, or a failed write (after which every append fails).
  bool append(std::uint64_t seq, std::int64_t time_us, bool keyframe, std::string_view payload);
  // Hands the buffer to the OS now; a caller that goes idle (a paused run) calls it so the last
  // frames do not wait for the next append.
  bool flush(std::string* error = nullptr);
  // Flushes, writes the index frame and the trailer, closes the file. Idempotent.
  bool close(std::string* error);

  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  std::uint64_t frames() const { return frames_; }
  std::uint64_t bytes() const { return flushed_bytes_ + buffer_.size(); }  // file size so far, buffer included
  const std::vector<KvrecIndexEntry>& keyframes() const { return keyframes_; }

 private:
  KvrecWriter(std::string path, int fd, const KvrecWriterOptions& options);
  bool writeAll(const unsigned char* data, std::size_t size);
  bool fail(std::string message, std::string* error);
  void appendFrame(std::uint64_t seq, std::int64_t time_us, std::uint8_t flags, std::string_view payload);

  std::string path_;
  int fd_ = -1;
  KvrecWriterOptions options_;
  std::vector<unsigned char> buffer_;
  std::int64_t oldest_buffered_ns_ = 0;  // monotonic time of the first frame now in the buffer
  std::uint64_t flushed_bytes_ = 0;
  std::uint64_t frames_ = 0;
  std::uint64_t last_seq_ = 0;
  std::int64_t first_time_ = 0;
  std::int64_t last_time_ = 0;
  std::vector<KvrecIndexEntry> keyframes_;
  std::string error_;
  bool failed_ = false;
};

}  // namespace kvscope
