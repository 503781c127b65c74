#pragma once
// Reads a .kvrec recording (layout in KvrecFormat.h) from a read-only mmap. Opening fails only when
// the header is unusable; damage after it becomes problems: a corrupt frame is reported with its
// offset (and seq when its header is plausible) and skipped by resynchronising at the next sync
// marker whose frame validates; a recording cut short (crash, kill -9) is a truncated tail. The
// keyframe index comes from the trailer, or from a full scan when the trailer is missing or damaged.
// A frame whose seq does not follow the previous one's or whose time goes back (a duplicated chunk,
// a hand-edited frame) is skipped and reported, one problem per run of them; a second recording
// header (two files joined) ends the recording there, reported. Seek and the times cover the rest.
// The file is mapped at its size at open; recordings are append-only, so a file still being
// written is read up to that size (a file truncated by another process while open would fault).
// One reader per thread: next() and seek() move its position; open several for parallel reads.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backend/recording/KvrecFormat.h"

namespace kvscope {

struct KvrecFrame {
  std::uint64_t seq = 0;
  std::int64_t time_us = 0;
  bool keyframe = false;
  std::string_view payload;  // into the mapping: valid while the reader lives
  std::uint64_t offset = 0;  // file offset of the frame
};

struct KvrecProblem {
  enum class Kind {
    CorruptFrame,   // bytes skipped to resynchronise
    TruncatedTail,  // the recording ends inside a frame, or without its index (not closed)
    DamagedIndex,   // the trailer is there but its index is not usable; rebuilt by a scan
    OutOfOrder,     // valid frames that repeat an earlier seq or go back in time: skipped
    Concatenated,   // another recording's header follows: the rest of the file is not read
  };
  Kind kind = Kind::CorruptFrame;
  std::uint64_t offset = 0;
  std::optional<std::uint64_t> seq;  // a corrupt frame's seq, when its header is plausible
  std::uint64_t skipped_bytes = 0;   // CorruptFrame: bytes up to the next valid frame
  std::uint64_t skipped_frames = 0;  // CorruptFrame: damaged frames (or runs of garbage) in them;
                                     // OutOfOrder: the frames of the run
  std::string message;               // names the file, the byte offset and what was wrong
};

struct KvrecStats {
  std::uint64_t frames = 0;  // data frames, per the index written at close or the rebuild scan
  std::uint64_t keyframes = 0;
  std::uint64_t skipped_bytes = 0;  // over every corrupt-frame problem found so far
  std::uint64_t skipped_frames = 0;
  bool truncated = false;
  std::uint64_t truncated_at = 0;  // where the readable recording ends, when truncated
  bool index_rebuilt = false;
  std::uint64_t out_of_order_frames = 0;  // skipped as repeats or going back in time (OutOfOrder)
  bool concatenated = false;
};

class KvrecReader {
 public:
  // nullptr with `*error` naming the file for: missing or unreadable file, empty file, not a
  // recording, truncated header, corrupt header, unsupported version.
  static std::unique_ptr<KvrecReader> open(const std::string& path, std::string* error);
  ~KvrecReader();
  KvrecReader(const KvrecReader&) = delete;
  KvrecReader& operator=(const KvrecReader&) = delete;

  // The next data frame (index frames are skipped); false at the end. Damage met on the way is
  // added to problems() once.
  bool next(KvrecFrame& out);
  // To the last keyframe whose time <= time_us, or to the first frame when there is none.
  void seek(std::int64_t time_us);
  void rewind();
  std::optional<KvrecIndexEntry> keyframeAtOrBefore(std::int64_t time_us) const;

  const std::vector<KvrecIndexEntry>& keyframes() const { return index_; }
  std::int64_t firstTime() const { return first_time_; }  // 0 for a recording without frames
  std::int64_t lastTime() const { return last_time_; }
  const std::string& metadata() const { return metadata_; }
  const std::string& path() const { return path_; }
  std::uint64_t fileSize() const { return size_; }

  const std::vector<KvrecProblem>& problems() const { return problems_; }
  KvrecStats stats() const { return stats_; }

 private:
  struct Parsed {
    std::uint32_t length = 0;
    std::uint64_t seq = 0;
    std::int64_t time_us = 0;
    std::uint8_t flags = 0;
    bool plausible = false;  // sync marker and length look right (checksum or end of file aside)
  };
  enum class Check { Ok, Incomplete, Bad };

  KvrecReader() = default;
  bool readHeader(std::string* error);
  bool loadIndexFromTrailer();
  void rebuildIndex();
  Check check(std::uint64_t at, Parsed& f, const char** why = nullptr) const;
  // The next offset >= from holding a valid frame (data_end_ if none); counts failed candidates.
  std::uint64_t findValid(std::uint64_t from, Parsed& f, std::uint64_t& candidates) const;
  // Moves `at` to the next valid frame (parsed into f), reporting damage on the way; false at the end.
  bool advance(std::uint64_t& at, Parsed& f, std::optional<std::uint64_t> prev_seq);
  void addProblem(KvrecProblem p);
  // The frames a pass keeps must follow each other: seq up, time not down. One per pass (the scan,
  // next()), reset by seek() and rewind().
  struct Order {
    std::optional<std::uint64_t> seq;
    std::int64_t time_us = 0;
    std::optional<std::size_t> run;  // problems_ index of the open run of skipped frames
    bool run_counted = false;        // the run is this pass's to count (not reported before)
  };
  // True when the frame at `at` is in order (it becomes the new reference); else reports it.
  bool keepInOrder(Order& order, std::uint64_t at, const Parsed& f);
  std::optional<std::int64_t> timeOfFrameAt(std::uint64_t at) const;  // a valid data frame's there

  std::string path_;
  const unsigned char* base_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t data_begin_ = 0;
  std::uint64_t data_end_ = 0;
  std::uint64_t pos_ = 0;
  std::optional<std::uint64_t> prev_seq_;  // of the last valid frame passed by next()
  Order order_;                            // next()'s
  std::string metadata_;
  std::vector<KvrecIndexEntry> index_;
  std::int64_t first_time_ = 0;
  std::int64_t last_time_ = 0;
  std::vector<KvrecProblem> problems_;
  std::set<std::uint64_t> reported_;  // offsets already in problems_, so re-reading adds nothing
  KvrecStats stats_;
};

}  // namespace kvscope
