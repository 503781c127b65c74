#pragma once
// Turns one worker's Mooncake transfer-engine log records into the link events the Mooncake links
// panel, the recorder and the diagnosis already consume: LinkHealth on the
// P/D pair the line's peer address names (the cluster's address book, as LogEventMapper does),
// with the line's severity, file and message as the reason, so the panel shows what Mooncake
// itself said. A transfer failure, an unreachable peer, a re-probe or a metadata error makes the
// link Suspect; dead-marking makes it Dead; a reconnect that found the peer connected makes it
// Alive. A local RNIC going inactive makes every link of this worker Suspect. No request or
// transfer events: SGLang logs its own view of the same failure, and counting both would count
// each failure twice.
#include <map>
#include <string>
#include <utility>

#include "core/live/LineShapeCounter.h"
#include "core/live/LogEventMapper.h"
#include "core/live/MooncakeLogParser.h"

namespace kvscope {

struct MooncakeLineCounts {
  long lines = 0;
  long known = 0;     // a known message (Info included)
  long unknown = 0;   // a glog line of no known message
  long not_glog = 0;  // no glog prefix
};

class MooncakeLogMapper {
 public:
  static constexpr std::size_t kMaxReason = 400;

  MooncakeLogMapper(LiveWorkerRef worker, const LiveAddressBook* book) : ref_(std::move(worker)), book_(book) {}

  LogMapping map(const MooncakeLogRecord& r);
  // parse + count + map, for a log file's lines.
  LogMapping feed(std::string_view line);
  // Adds a parsed line to the counts (feed() does it; a reader that parses first calls it itself).
  void count(const MooncakeLogRecord& r);
  const MooncakeLineCounts& counts() const { return counts_; }
  const LineShapeCounter& unknownShapes() const { return shapes_; }  // glog lines of no known message
  const LiveWorkerRef& ref() const { return ref_; }

  // "Mooncake E worker_pool.cpp:654: Worker: Process failed ..." (cut to kMaxReason).
  static std::string reason(const MooncakeLogRecord& r);

 private:
  struct Link {
    std::int32_t prefill = -1;
    WorkerId decode = kNoWorker;
    bool known() const { return prefill >= 0 && decode != kNoWorker; }
  };
  Link linkFor(const std::string& peer) const;
  void linkState(LogMapping& m, Link link, LinkState state, const std::string& reason);
  void everyLink(LogMapping& m, LinkState state, const std::string& reason);

  LiveWorkerRef ref_;
  const LiveAddressBook* book_;
  std::map<std::pair<std::int32_t, WorkerId>, LinkState> links_;
  MooncakeLineCounts counts_;
  LineShapeCounter shapes_;
};

}  // namespace kvscope
