#include "backend/recording/KvrecReader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kvscope {

namespace {

// Printable, with C escapes for the rest, so a message shows what the file really starts with.
std::string escaped(const unsigned char* p, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = p[i];
    if (c == '\r')
      out += "\\r";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' || c == '\\')
      (out += '\\') += static_cast<char>(c);
    else if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

bool looksLikeText(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = p[i];
    const bool text = c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c != 0x7f);  // >= 0x80: UTF-8
    if (!text) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<KvrecReader> KvrecReader::open(const std::string& path, std::string* error) {
  auto set = [&](std::string message) {
    if (error) *error = std::move(message);
    return nullptr;
  };
  const std::string name = "'" + path + "'";
  // Non-blocking, so a FIFO is refused below instead of waiting for a writer for ever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return set(name + ": no such file");
    return set(name + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return set(name + ": cannot stat: " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return set(name +
               (S_ISDIR(st.st_mode) ? ": is a directory" : ": is not a regular file (a FIFO, device or socket)") +
               ", not a recording");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return set(name + ": empty file (0 bytes), not a recording");
  }
  void* map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (map == MAP_FAILED) return set(name + ": cannot map the file: " + std::strerror(map_errno));

  std::unique_ptr<KvrecReader> r(new KvrecReader());
  r->path_ = path;
  r->base_ = static_cast<const unsigned char*>(map);
  r->size_ = static_cast<std::uint64_t>(st.st_size);
  if (!r->readHeader(error)) return nullptr;
  if (!r->loadIndexFromTrailer()) r->rebuildIndex();
  r->pos_ = r->data_begin_;
  return r;
}

KvrecReader::~KvrecReader() {
  if (base_) ::munmap(const_cast<unsigned char*>(base_), size_);
}

bool KvrecReader::readHeader(std::string* error) {
  const std::string name = "'" + path_ + "'";
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return false;
  };
  const std::size_t head = static_cast<std::size_t>(std::min<std::uint64_t>(size_, kKvrecMagic.size()));
  if (std::memcmp(base_, kKvrecMagic.data(), head) != 0) {
    const std::size_t shown = static_cast<std::size_t>(std::min<std::uint64_t>(size_, 24));
    std::string m = name + ": not a KVScope recording (it starts with \"" + escaped(base_, shown) +
                    "\", a recording with \"" + escaped(reinterpret_cast<const unsigned char*>(kKvrecMagic.data()), 8) +
                    "\")";
    if (looksLikeText(base_, static_cast<std::size_t>(std::min<std::uint64_t>(size_, 512))))
      m += "; it looks like a text file";
    return fail(m);
  }
  const std::uint64_t fixed_end = kKvrecHeaderFixedSize;
  if (size_ < fixed_end + kKvrecHeaderChecksumSize)
    return fail(name + ": truncated header: the file has " + std::to_string(size_) +
                " bytes, a recording header at least " + std::to_string(fixed_end + kKvrecHeaderChecksumSize));
  const std::uint32_t version = kvrec::getU32(base_ + 8);
  if (version != kKvrecVersion) {
    // A future version is worth saying so; a wild number is damage.
    if (version == 0 || version > 255)
      return fail(name + ": corrupt header: format version " + std::to_string(version) + " is not plausible");
    return fail(name + ": unsupported recording format version " + std::to_string(version) +
                " (this build reads version " + std::to_string(kKvrecVersion) + ")");
  }
  const std::uint32_t meta_len = kvrec::getU32(base_ + 12);
  if (meta_len > kKvrecMaxPayload)
    return fail(name + ": corrupt header: metadata length " + std::to_string(meta_len) + " exceeds the " +
                std::to_string(kKvrecMaxPayload) + "-byte limit");
  const std::uint64_t header_size = fixed_end + meta_len + kKvrecHeaderChecksumSize;
  if (size_ < header_size)
    return fail(name + ": truncated header: it needs " + std::to_string(header_size) + " bytes (" +
                std::to_string(meta_len) + " of run metadata), the file has " + std::to_string(size_));
  const std::uint32_t stored = kvrec::getU32(base_ + fixed_end + meta_len);
  const std::uint32_t computed = kvrec::headerChecksum(base_ + 8, meta_len);
  if (stored != computed) {
    char detail[64];
    std::snprintf(detail, sizeof detail, "stored %08x, computed %08x", stored, computed);
    return fail(name + ": corrupt header: run metadata checksum mismatch (" + detail + ")");
  }
  metadata_.assign(reinterpret_cast<const char*>(base_ + fixed_end), meta_len);
  data_begin_ = header_size;
  data_end_ = size_;
  return true;
}

KvrecReader::Check KvrecReader::check(std::uint64_t at, Parsed& f, const char** why) const {
  f = Parsed{};
  auto result = [&](Check c, const char* w) {
    if (why) *why = w;
    return c;
  };
  if (data_end_ - at < kKvrecFrameHeaderSize) return result(Check::Incomplete, "partial frame header");
  const unsigned char* p = base_ + at;
  if (kvrec::getU32(p) != kKvrecFrameSync) return result(Check::Bad, "no sync marker");
  f.length = kvrec::getU32(p + 4);
  f.seq = kvrec::getU64(p + 8);
  f.time_us = kvrec::getI64(p + 16);
  f.flags = p[24];
  if (f.length > kKvrecMaxPayload) return result(Check::Bad, "payload length over the 64 MiB limit");
  f.plausible = true;
  if (f.length > data_end_ - at - kKvrecFrameHeaderSize)
    return result(Check::Incomplete, "payload length runs past the end of the recording");
  const std::string_view payload(reinterpret_cast<const char*>(p + kKvrecFrameHeaderSize), f.length);
  if (kvrec::getU32(p + 25) != kvrec::frameChecksum(p, payload)) return result(Check::Bad, "checksum mismatch");
  return result(Check::Ok, nullptr);
}

std::uint64_t KvrecReader::findValid(std::uint64_t from, Parsed& f, std::uint64_t& candidates) const {
  unsigned char marker[4];
  kvrec::putU32(marker, kKvrecFrameSync);
  std::uint64_t at = from;
  while (at < data_end_ && data_end_ - at >= sizeof marker) {
    const void* hit = ::memmem(base_ + at, data_end_ - at, marker, sizeof marker);
    if (!hit) break;
    at = static_cast<std::uint64_t>(static_cast<const unsigned char*>(hit) - base_);
    if (check(at, f) == Check::Ok) return at;
    ++candidates;
    ++at;
  }
  f = Parsed{};
  return data_end_;
}

void KvrecReader::addProblem(KvrecProblem p) {
  if (!reported_.insert(p.offset).second) return;
  switch (p.kind) {
    case KvrecProblem::Kind::CorruptFrame:
      stats_.skipped_bytes += p.skipped_bytes;
      stats_.skipped_frames += p.skipped_frames;
      break;
    case KvrecProblem::Kind::TruncatedTail:
      stats_.truncated = true;
      stats_.truncated_at = p.offset;
      break;
    case KvrecProblem::Kind::DamagedIndex:
    case KvrecProblem::Kind::OutOfOrder:  // counted as the run grows (keepInOrder)
    case KvrecProblem::Kind::Concatenated:
      break;
  }
  problems_.push_back(std::move(p));
}

bool KvrecReader::advance(std::uint64_t& at, Parsed& f, std::optional<std::uint64_t> prev_seq) {
  while (at < data_end_) {
    const char* why = nullptr;
    const Check c = check(at, f, &why);
    if (c == Check::Ok) return true;
    const Parsed bad = f;
    Parsed after;
    std::uint64_t candidates = 0;
    const std::uint64_t next = findValid(at + 1, after, candidates);
    // Another recording's header among the bad bytes: two files joined. This one ends there.
    if (const void* m = ::memmem(base_ + at, next - at, kKvrecMagic.data(), kKvrecMagic.size())) {
      const auto second = static_cast<std::uint64_t>(static_cast<const unsigned char*>(m) - base_);
      KvrecProblem p;
      p.kind = KvrecProblem::Kind::Concatenated;
      p.offset = second;
      p.message = "'" + path_ + "': another recording starts at byte " + std::to_string(second) +
                  " (two files joined?); the last " + std::to_string(data_end_ - second) +
                  " bytes are not part of this recording and are skipped";
      stats_.concatenated = true;
      addProblem(std::move(p));
      // A later pass stops at the new end and would see the bad frame at `at` as a truncated tail:
      // it is the same damage, reported once.
      reported_.insert(at);
      data_end_ = second;
      return false;
    }
    if (!reported_.count(at)) {
      KvrecProblem p;
      p.offset = at;
      if (c == Check::Incomplete && next == data_end_) {
        p.kind = KvrecProblem::Kind::TruncatedTail;
        p.message = "'" + path_ + "': truncated tail at byte " + std::to_string(at) + ": the last " +
                    std::to_string(data_end_ - at) + " bytes are a partial frame (the recording was cut short)";
      } else {
        p.kind = KvrecProblem::Kind::CorruptFrame;
        // The seq is believable only when the header looked right and it fits between its neighbours.
        if (bad.plausible && (!prev_seq || bad.seq > *prev_seq) && (next == data_end_ || bad.seq < after.seq))
          p.seq = bad.seq;
        p.skipped_bytes = next - at;
        p.skipped_frames = 1 + candidates;
        p.message =
            "'" + path_ + "': corrupt frame at byte " + std::to_string(at) +
            (p.seq ? " (seq " + std::to_string(*p.seq) + ")" : std::string()) + ": " + why + "; skipped " +
            std::to_string(p.skipped_bytes) + " bytes (" + std::to_string(p.skipped_frames) +
            (p.skipped_frames == 1 ? " frame" : " frames") + ") to " +
            (next == data_end_ ? "the end of the recording" : "the next valid frame at byte " + std::to_string(next));
      }
      addProblem(std::move(p));
    }
    at = next;
  }
  return false;
}

bool KvrecReader::loadIndexFromTrailer() {
  if (size_ < data_begin_ + kKvrecTrailerSize ||
      std::memcmp(base_ + size_ - kKvrecEndMagic.size(), kKvrecEndMagic.data(), kKvrecEndMagic.size()) != 0)
    return false;  // not closed: rebuildIndex() reports the truncated tail
  data_end_ = size_ - kKvrecTrailerSize;
  auto damaged = [&](const std::string& why) {
    KvrecProblem p;
    p.kind = KvrecProblem::Kind::DamagedIndex;
    p.offset = data_end_;
    p.message = "'" + path_ + "': damaged index (" + why + "); rebuilt by scanning the frames";
    addProblem(std::move(p));
    return false;
  };
  const std::uint64_t index_at = kvrec::getU64(base_ + data_end_);
  if (index_at < data_begin_ || index_at >= data_end_)
    return damaged("the trailer points at byte " + std::to_string(index_at) + ", outside the frames");
  Parsed f;
  if (check(index_at, f) != Check::Ok || !(f.flags & kKvrecFlagIndex))
    return damaged("no valid index frame at byte " + std::to_string(index_at));
  if (index_at + kKvrecFrameHeaderSize + f.length != data_end_)
    return damaged("the index frame does not end at the trailer");
  const unsigned char* p = base_ + index_at + kKvrecFrameHeaderSize;
  if (f.length < kKvrecIndexFixedSize || (f.length - kKvrecIndexFixedSize) % kKvrecIndexEntrySize != 0 ||
      kvrec::getU64(p + 24) != (f.length - kKvrecIndexFixedSize) / kKvrecIndexEntrySize)
    return damaged("index size does not match its keyframe count");
  const std::uint64_t count = kvrec::getU64(p + 24);
  std::vector<KvrecIndexEntry> entries;
  entries.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const unsigned char* e = p + kKvrecIndexFixedSize + i * kKvrecIndexEntrySize;
    KvrecIndexEntry k{kvrec::getI64(e), kvrec::getU64(e + 8), kvrec::getU64(e + 16)};
    if (k.offset < data_begin_ || k.offset >= index_at || (!entries.empty() && k.offset <= entries.back().offset))
      return damaged("keyframe " + std::to_string(i) + " points at byte " + std::to_string(k.offset));
    if (!entries.empty() && k.time_us < entries.back().time_us)
      return damaged("keyframe " + std::to_string(i) + " goes back in time");
    entries.push_back(k);
  }
  index_ = std::move(entries);
  stats_.frames = kvrec::getU64(p);
  stats_.keyframes = index_.size();
  first_time_ = kvrec::getI64(p + 8);
  last_time_ = kvrec::getI64(p + 16);
  // Only data before the index frame is read; the index frame itself is skipped like any other.
  return true;
}

std::optional<std::int64_t> KvrecReader::timeOfFrameAt(std::uint64_t at) const {
  Parsed f;
  if (at >= data_end_ || check(at, f) != Check::Ok || (f.flags & kKvrecFlagIndex)) return std::nullopt;
  return f.time_us;
}

bool KvrecReader::keepInOrder(Order& order, std::uint64_t at, const Parsed& f) {
  auto keep = [&] {
    order.seq = f.seq;
    order.time_us = f.time_us;
    order.run.reset();
    return true;
  };
  if (!order.seq) return keep();
  const bool repeats = f.seq <= *order.seq;
  if (!repeats && f.time_us >= order.time_us) return keep();
  if (!repeats) {
    // Time goes back with the seq in order: one of the two frames is wrong. When the next frame is
    // behind the previous one too, that previous frame (already passed) was the one ahead of its
    // neighbours: this one is kept, with a warning. Otherwise this one is the stray, skipped.
    const auto after = timeOfFrameAt(at + kKvrecFrameHeaderSize + f.length);
    if (after && *after < order.time_us && *after >= f.time_us) {
      if (!reported_.count(at)) {
        KvrecProblem p;
        p.kind = KvrecProblem::Kind::OutOfOrder;
        p.offset = at;
        p.seq = f.seq;
        p.message = "'" + path_ + "': time goes back at byte " + std::to_string(at) + " (seq " + std::to_string(f.seq) +
                    ", " + std::to_string(f.time_us) + " us after " + std::to_string(order.time_us) +
                    " us): the frame before (seq " + std::to_string(*order.seq) + ") was ahead of its neighbours";
        addProblem(std::move(p));
      }
      return keep();
    }
  }
  if (!order.run) {
    order.run_counted = !reported_.count(at);
    if (order.run_counted) {
      KvrecProblem p;
      p.kind = KvrecProblem::Kind::OutOfOrder;
      p.offset = at;
      p.seq = f.seq;
      addProblem(std::move(p));
      order.run = problems_.size() - 1;
    } else {
      order.run = std::numeric_limits<std::size_t>::max();  // reported by an earlier pass
    }
  }
  if (!order.run_counted) return false;
  KvrecProblem& p = problems_[*order.run];
  ++p.skipped_frames;
  ++stats_.out_of_order_frames;
  p.message = "'" + path_ + "': " + std::to_string(p.skipped_frames) + (p.skipped_frames == 1 ? " frame" : " frames") +
              " from byte " + std::to_string(p.offset) + " (seq " + std::to_string(*p.seq) +
              (p.skipped_frames == 1 ? "" : " to " + std::to_string(f.seq)) + ") " +
              (repeats ? "repeat or go back from seq " + std::to_string(*order.seq) +
                             " (a duplicated part of the file, or a second recording)"
                       : "go back in time (to " + std::to_string(f.time_us) + " us, after " +
                             std::to_string(order.time_us) + " us)") +
              "; skipped";
  return false;
}

void KvrecReader::rebuildIndex() {
  stats_.index_rebuilt = true;
  const bool closed = data_end_ != size_;  // a trailer was there (its index damaged)
  std::uint64_t at = data_begin_;
  std::optional<std::uint64_t> prev;
  Parsed f;
  std::uint64_t frames = 0;
  Order order;
  while (advance(at, f, prev)) {
    if (!(f.flags & kKvrecFlagIndex) && keepInOrder(order, at, f)) {
      // Keep the index sorted by time even for a file whose frames are not (a hand-made one).
      if ((f.flags & kKvrecFlagKeyframe) && (index_.empty() || f.time_us >= index_.back().time_us))
        index_.push_back(KvrecIndexEntry{f.time_us, f.seq, at});
      if (frames == 0) first_time_ = f.time_us;
      last_time_ = f.time_us;
      ++frames;
    }
    prev = f.seq;
    at += kKvrecFrameHeaderSize + f.length;
  }
  stats_.frames = frames;
  stats_.keyframes = index_.size();
  if (!closed && !stats_.truncated) {
    KvrecProblem p;
    p.kind = KvrecProblem::Kind::TruncatedTail;
    p.offset = data_end_;
    p.message = "'" + path_ + "': truncated tail at byte " + std::to_string(data_end_) +
                ": the recording ends without its index (it was not closed: crash or kill); " + std::to_string(frames) +
                " frames readable, index rebuilt";
    addProblem(std::move(p));
  }
}

bool KvrecReader::next(KvrecFrame& out) {
  Parsed f;
  while (advance(pos_, f, prev_seq_)) {
    const std::uint64_t at = pos_;
    pos_ += kKvrecFrameHeaderSize + f.length;
    prev_seq_ = f.seq;
    if ((f.flags & kKvrecFlagIndex) || !keepInOrder(order_, at, f)) continue;
    out.seq = f.seq;
    out.time_us = f.time_us;
    out.keyframe = (f.flags & kKvrecFlagKeyframe) != 0;
    out.payload = std::string_view(reinterpret_cast<const char*>(base_ + at + kKvrecFrameHeaderSize), f.length);
    out.offset = at;
    return true;
  }
  return false;
}

std::optional<KvrecIndexEntry> KvrecReader::keyframeAtOrBefore(std::int64_t time_us) const {
  auto it = std::upper_bound(index_.begin(), index_.end(), time_us,
                             [](std::int64_t t, const KvrecIndexEntry& e) { return t < e.time_us; });
  if (it == index_.begin()) return std::nullopt;
  return *std::prev(it);
}

void KvrecReader::seek(std::int64_t time_us) {
  const auto k = keyframeAtOrBefore(time_us);
  pos_ = k ? k->offset : data_begin_;
  prev_seq_.reset();
  order_ = Order{};
}

void KvrecReader::rewind() {
  pos_ = data_begin_;
  prev_seq_.reset();
  order_ = Order{};
}

}  // namespace kvscope
