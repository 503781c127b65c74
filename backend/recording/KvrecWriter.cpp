#include "backend/recording/KvrecWriter.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/io/AtomicFile.h"

namespace kvscope {

namespace {

// The coarse clock costs a few ns per append; its ~4 ms resolution is plenty for a one-second bound.
std::int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string systemError(const std::string& path, const char* what) {
  return "'" + path + "': " + what + ": " + std::strerror(errno);
}

}  // namespace

std::unique_ptr<KvrecWriter> KvrecWriter::create(const std::string& path, std::string_view metadata, std::string* error,
                                                 const KvrecWriterOptions& options) {
  auto set = [&](std::string message) {
    if (error) *error = std::move(message);
    return nullptr;
  };
  // A regular file only (a symlink is followed): never a device, FIFO or directory.
  std::string why;
  const int fd = AtomicFile::openForWrite(path, &why);
  if (fd < 0) return set("cannot create recording " + why);
  return adopt(path, fd, metadata, error, options);
}

std::unique_ptr<KvrecWriter> KvrecWriter::adopt(const std::string& path, int fd, std::string_view metadata,
                                                std::string* error, const KvrecWriterOptions& options) {
  std::unique_ptr<KvrecWriter> w(new KvrecWriter(path, fd, options));
  if (metadata.size() > kKvrecMaxPayload) {
    if (error)
      *error = "'" + path + "': run metadata of " + std::to_string(metadata.size()) + " bytes exceeds the " +
               std::to_string(kKvrecMaxPayload) + "-byte limit";
    return nullptr;
  }

  // The header goes to the OS at once: a recording killed before its first flush still opens.
  std::vector<unsigned char> header(kKvrecHeaderFixedSize + metadata.size() + kKvrecHeaderChecksumSize);
  std::memcpy(header.data(), kKvrecMagic.data(), kKvrecMagic.size());
  kvrec::putU32(header.data() + 8, kKvrecVersion);
  kvrec::putU32(header.data() + 12, static_cast<std::uint32_t>(metadata.size()));
  if (!metadata.empty()) std::memcpy(header.data() + kKvrecHeaderFixedSize, metadata.data(), metadata.size());
  kvrec::putU32(header.data() + kKvrecHeaderFixedSize + metadata.size(),
                kvrec::headerChecksum(header.data() + 8, metadata.size()));
  if (!w->writeAll(header.data(), header.size())) {
    if (error) *error = w->error_;
    return nullptr;
  }
  return w;
}

KvrecWriter::KvrecWriter(std::string path, int fd, const KvrecWriterOptions& options)
    : path_(std::move(path)), fd_(fd), options_(options) {
  buffer_.reserve(options_.buffer_bytes + 4096);
}

KvrecWriter::~KvrecWriter() { close(nullptr); }

bool KvrecWriter::fail(std::string message, std::string* error) {
  error_ = std::move(message);
  if (error) *error = error_;
  return false;
}

bool KvrecWriter::writeAll(const unsigned char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      error_ = systemError(path_, "write failed");
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    flushed_bytes_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

void KvrecWriter::appendFrame(std::uint64_t seq, std::int64_t time_us, std::uint8_t flags, std::string_view payload) {
  const std::size_t at = buffer_.size();
  buffer_.resize(at + kKvrecFrameHeaderSize + payload.size());
  unsigned char* f = buffer_.data() + at;
  kvrec::putU32(f, kKvrecFrameSync);
  kvrec::putU32(f + 4, static_cast<std::uint32_t>(payload.size()));
  kvrec::putU64(f + 8, seq);
  kvrec::putI64(f + 16, time_us);
  f[24] = flags;
  kvrec::putU32(f + 25, kvrec::frameChecksum(f, payload));
  if (!payload.empty()) std::memcpy(f + kKvrecFrameHeaderSize, payload.data(), payload.size());
}

bool KvrecWriter::append(std::uint64_t seq, std::int64_t time_us, bool keyframe, std::string_view payload) {
  if (fd_ < 0) return fail("'" + path_ + "': append after close", nullptr);
  if (failed_) return false;
  if (payload.size() > kKvrecMaxPayload)
    return fail("'" + path_ + "': frame seq " + std::to_string(seq) + " has " + std::to_string(payload.size()) +
                    " bytes, over the " + std::to_string(kKvrecMaxPayload) + "-byte limit",
                nullptr);
  if (frames_ > 0 && time_us < last_time_)
    return fail("'" + path_ + "': frame seq " + std::to_string(seq) + " at time " + std::to_string(time_us) +
                    " us is earlier than the previous frame (" + std::to_string(last_time_) +
                    " us); frames must be appended in time order",
                nullptr);

  const std::int64_t now = monotonicNs();
  if (buffer_.empty()) oldest_buffered_ns_ = now;
  if (keyframe) keyframes_.push_back(KvrecIndexEntry{time_us, seq, bytes()});
  appendFrame(seq, time_us, keyframe ? kKvrecFlagKeyframe : std::uint8_t{0}, payload);
  if (frames_ == 0) first_time_ = time_us;
  ++frames_;
  last_seq_ = seq;
  last_time_ = time_us;

  const auto interval_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.flush_interval).count();
  if (buffer_.size() >= options_.buffer_bytes || now - oldest_buffered_ns_ >= interval_ns) return flush();
  return true;
}

bool KvrecWriter::flush(std::string* error) {
  if (failed_) {
    if (error) *error = error_;
    return false;
  }
  if (fd_ < 0 || buffer_.empty()) return true;
  // Bytes already counted in flushed_bytes_ by writeAll; the buffer is the only copy until written.
  const bool ok = writeAll(buffer_.data(), buffer_.size());
  buffer_.clear();
  if (!ok && error) *error = error_;
  return ok;
}

bool KvrecWriter::close(std::string* error) {
  if (fd_ < 0) {
    if (failed_ && error) *error = error_;
    return !failed_;
  }
  bool ok = flush(error);
  if (ok) {
    const std::size_t index_size = kKvrecIndexFixedSize + kKvrecIndexEntrySize * keyframes_.size();
    // Past the payload limit (some 2.8M keyframes) the index is left out; readers rebuild it by a scan.
    if (index_size <= kKvrecMaxPayload) {
      std::vector<unsigned char> index(index_size);
      kvrec::putU64(index.data(), frames_);
      kvrec::putI64(index.data() + 8, first_time_);
      kvrec::putI64(index.data() + 16, last_time_);
      kvrec::putU64(index.data() + 24, keyframes_.size());
      unsigned char* e = index.data() + kKvrecIndexFixedSize;
      for (const auto& k : keyframes_) {
        kvrec::putI64(e, k.time_us);
        kvrec::putU64(e + 8, k.seq);
        kvrec::putU64(e + 16, k.offset);
        e += kKvrecIndexEntrySize;
      }
      const std::uint64_t index_offset = bytes();
      appendFrame(last_seq_, last_time_, kKvrecFlagIndex,
                  std::string_view(reinterpret_cast<const char*>(index.data()), index.size()));
      const std::size_t at = buffer_.size();
      buffer_.resize(at + kKvrecTrailerSize);
      kvrec::putU64(buffer_.data() + at, index_offset);
      std::memcpy(buffer_.data() + at + 8, kKvrecEndMagic.data(), kKvrecEndMagic.size());
      ok = flush(error);
    }
  }
  if (ok && options_.sync_on_close && ::fsync(fd_) != 0) ok = fail(systemError(path_, "fsync failed"), error);
  if (::close(fd_) != 0 && ok) ok = fail(systemError(path_, "close failed"), error);
  fd_ = -1;
  buffer_.clear();
  buffer_.shrink_to_fit();
  if (!ok) failed_ = true;
  return ok;
}

}  // namespace kvscope
