#pragma once
// One line of a Mooncake transfer-engine log, classified. The engine logs
// through glog: `E1201 12:00:00.123456 12345 worker_pool.cpp:654] message` (severity I/W/E/F,
// MMDD, time with microseconds, thread id, file:line), or with `--log_year_in_prefix`
// `E20251201 ...`. The messages are the LOG(...) strings of kvcache-ai/Mooncake
// (mooncake-transfer-engine/src/transport/{tcp,rdma}_transport, transfer_metadata{,_plugin}.cpp,
// mooncake-integration/transfer_engine/transfer_engine_py.cpp), matched by their fixed words so
// that every version that kept the words is understood. Pure syntax: which P/D link a peer
// address is comes from MooncakeLogMapper. Never throws.
#include <cstdint>
#include <string>
#include <string_view>

namespace kvscope {

enum class MooncakeLineKind : std::uint8_t {
  NotGlog,          // no glog prefix: a continuation, or another program's line
  Unknown,          // a glog line of no known message
  TransferFailed,   // a slice or transfer to a peer failed (a completion error, a TCP session error, a timeout)
  PeerUnreachable,  // no connection or handshake to the peer
  PeerMarkedDead,   // the engine gave up on the peer: endpoint marked inactive, rail paused, segment closed
  NicInactive,      // a local RNIC was marked inactive
  NicActive,        // a local RNIC came back
  Reconnect,        // a re-probe or reconnect: re-establishing an endpoint, a recovery probe
  MetadataError,    // the metadata store or handshake exchange failed, or a segment descriptor is missing
  Info,             // a known message that says nothing about a link
};
const char* toString(MooncakeLineKind);

struct MooncakeLogRecord {
  MooncakeLineKind kind = MooncakeLineKind::NotGlog;
  char severity = 0;  // 'I', 'W', 'E', 'F'
  bool has_year = false;
  std::int64_t clock_s = 0;  // seconds since 1970 (year 1970 when the prefix has none)
  int micros = 0;
  std::string thread;  // as written (decimal, or hex on some platforms)
  std::string file;    // "worker_pool.cpp"
  int line = 0;
  std::string message;    // after "] " (at most kMaxMessage bytes)
  std::string peer;       // the peer's Mooncake server name HOST:PORT, when the line names one
  std::string peer_nic;   // "HOST:PORT@mlx5_1" as written, when the line names one
  std::string local_nic;  // "mlx5_0" (the local RNIC), when the line names one
};

class MooncakeLogParser {
 public:
  static constexpr std::size_t kMaxMessage = 4096;

  static MooncakeLogRecord parse(std::string_view line);
  // The glog prefix alone; `rest` gets the message. False when the line has none.
  static bool parsePrefix(std::string_view line, MooncakeLogRecord& r, std::string_view& rest);
  // "HOST:PORT" of a Mooncake NIC path "HOST:PORT@device" (the text itself when it has no '@').
  static std::string serverOf(std::string_view nic_path);
};

}  // namespace kvscope
