#include "core/live/MooncakeLogParser.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "core/model/CivilDate.h"

namespace kvscope {

const char* toString(MooncakeLineKind k) {
  switch (k) {
    case MooncakeLineKind::NotGlog:
      return "not_glog";
    case MooncakeLineKind::Unknown:
      return "unknown";
    case MooncakeLineKind::TransferFailed:
      return "transfer_failed";
    case MooncakeLineKind::PeerUnreachable:
      return "peer_unreachable";
    case MooncakeLineKind::PeerMarkedDead:
      return "peer_marked_dead";
    case MooncakeLineKind::NicInactive:
      return "nic_inactive";
    case MooncakeLineKind::NicActive:
      return "nic_active";
    case MooncakeLineKind::Reconnect:
      return "reconnect";
    case MooncakeLineKind::MetadataError:
      return "metadata_error";
    case MooncakeLineKind::Info:
      return "info";
  }
  return "?";
}

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::optional<int> number(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A token up to a delimiter, without trailing punctuation.
std::string_view token(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] != ' ' && s[n] != ',' && s[n] != ')' && s[n] != '(' && s[n] != ';' && s[n] != '"') ++n;
  std::string_view t = s.substr(0, n);
  while (!t.empty() && (t.back() == '.' || t.back() == ':')) t.remove_suffix(1);
  return t;
}

struct Rule {
  std::string_view words;  // found anywhere in the message
  MooncakeLineKind kind;
};

// The LOG(...) messages by their fixed words, most specific first. Sources (kvcache-ai/Mooncake):
// W = transport/rdma_transport/worker_pool.cpp, E = rdma_endpoint.cpp, T = tcp_transport.cpp,
// M = transfer_metadata.cpp, P = transfer_metadata_plugin.cpp, Y = transfer_engine_py.cpp,
// R = rdma_transport.cpp / rdma_context.cpp.
constexpr Rule kRules[] = {
    // dead-marking (W, Y)
    {"Cannot make connection for endpoint", MooncakeLineKind::PeerMarkedDead},  // refined below
    {"Timed out waiting for RDMA ready ACK", MooncakeLineKind::PeerMarkedDead},
    {"Rail paused: peer=", MooncakeLineKind::PeerMarkedDead},
    {"CheckSegmentStatus not ok", MooncakeLineKind::PeerMarkedDead},
    // local RNIC (W, R)
    {"Failed to establish peer endpoints in local RNIC", MooncakeLineKind::NicInactive},
    {"Too many errors found in local RNIC", MooncakeLineKind::NicInactive},
    {"Local-side RDMA failure detected", MooncakeLineKind::NicInactive},
    {"is now inactive", MooncakeLineKind::NicInactive},
    {"is now active", MooncakeLineKind::NicActive},
    {"Disable device ", MooncakeLineKind::NicInactive},
    {" is not active", MooncakeLineKind::NicInactive},
    // re-probes and reconnects (E, W, R)
    {"simultaneous-open passive setup already connected", MooncakeLineKind::Reconnect},
    {"re-establishing connection", MooncakeLineKind::Reconnect},
    {"Peer reconnected with new address", MooncakeLineKind::Reconnect},
    {"Retry active handshake", MooncakeLineKind::Reconnect},
    {"scheduled recovery probe", MooncakeLineKind::Reconnect},
    {"GID changed during recovery", MooncakeLineKind::Reconnect},
    {"Auto GID reprobe", MooncakeLineKind::Reconnect},
    {"WR flush error", MooncakeLineKind::Reconnect},
    {"Re-establish connection", MooncakeLineKind::Reconnect},                // E v0.3.0
    {"Previous connection will be discarded", MooncakeLineKind::Reconnect},  // E v0.3.0
    // transfer failures (W, T, Y)
    {"Process failed for slice", MooncakeLineKind::TransferFailed},
    {"Cannot redispatch slice", MooncakeLineKind::TransferFailed},
    {"CQ stuck transfer group", MooncakeLineKind::TransferFailed},
    {"Session::writeHeader failed", MooncakeLineKind::TransferFailed},
    {"Session::readHeader failed", MooncakeLineKind::TransferFailed},
    {"Session::writeBody failed", MooncakeLineKind::TransferFailed},
    {"Session::readBody failed", MooncakeLineKind::TransferFailed},
    {"startTransfer encountered an", MooncakeLineKind::TransferFailed},
    {"Sync data transfer timeout", MooncakeLineKind::TransferFailed},
    {"TcpTransport: exception", MooncakeLineKind::TransferFailed},       // T v0.3.0
    {"TcpTransport: ASIO exception", MooncakeLineKind::TransferFailed},  // T v0.3.0
    {"Failed to ibv_post_send", MooncakeLineKind::TransferFailed},       // E v0.3.0
    // unreachable peers (T, E, P)
    {"failed to create connection to", MooncakeLineKind::PeerUnreachable},
    {"Cannot allocate endpoint", MooncakeLineKind::PeerUnreachable},  // W v0.3.0
    {"Endpoint is not active", MooncakeLineKind::PeerUnreachable},
    {"[Handshake] ", MooncakeLineKind::PeerUnreachable},  // E v0.3.0: a failed QP setup
    {"failed to get connection to", MooncakeLineKind::PeerUnreachable},
    {"Active handshake RPC failed", MooncakeLineKind::PeerUnreachable},
    {"handshake request by peer", MooncakeLineKind::PeerUnreachable},
    {"received packet mismatch", MooncakeLineKind::PeerUnreachable},
    {"Peer NIC ", MooncakeLineKind::PeerUnreachable},  // "Peer NIC X not found in HOST:PORT"
    {"SocketHandShakePlugin: connect()", MooncakeLineKind::PeerUnreachable},
    {"failed to get IP address of peer server", MooncakeLineKind::PeerUnreachable},
    // metadata (M, P, W, T)
    {"EtcdStoragePlugin: ", MooncakeLineKind::MetadataError},
    {"RedisStoragePlugin: ", MooncakeLineKind::MetadataError},
    {" curl: ", MooncakeLineKind::MetadataError},  // HTTPStoragePlugin: "GET url curl: ..."
    {" http=", MooncakeLineKind::MetadataError},   // "GET url http=404 body: ..."
    {"segment description", MooncakeLineKind::MetadataError},
    {"Cannot reload target segment", MooncakeLineKind::MetadataError},
    {"Corrupted segment descriptor", MooncakeLineKind::MetadataError},
    {"segment descriptor, name", MooncakeLineKind::MetadataError},
    {"TE metadata refresh polling", MooncakeLineKind::MetadataError},
    {"Unable to create metadata", MooncakeLineKind::MetadataError},
    {"cannot publish segments", MooncakeLineKind::MetadataError},
    {"failed to get RPC meta entry", MooncakeLineKind::MetadataError},
    {"No rkey for MR access", MooncakeLineKind::MetadataError},
    {"Peer device index out of range", MooncakeLineKind::MetadataError},
    {"SocketHandShakePlugin: ", MooncakeLineKind::MetadataError},  // the handshake/metadata exchange
    // known, no link in them (T, E, W, M, Y, R)
    {"TcpTransport: listen on port", MooncakeLineKind::Info},
    {"Connection has been established", MooncakeLineKind::Info},
    {"Received RDMA ready ACK", MooncakeLineKind::Info},
    {"Received same peer QP numbers", MooncakeLineKind::Info},
    {"Peer does not support RDMA ready ACK", MooncakeLineKind::Info},
    {"already performing the endpoint handshake", MooncakeLineKind::Info},
    {"Received context async event", MooncakeLineKind::Info},
    {"openSegment with target", MooncakeLineKind::Info},
    {"Topology discovery complete", MooncakeLineKind::Info},
    {"Using metadata cluster ID", MooncakeLineKind::Info},
    {"transport installed successfully", MooncakeLineKind::Info},
    {"Installing TCP transport", MooncakeLineKind::Info},
    {"RdmaTransport: using RDMA bind address", MooncakeLineKind::Info},
    {"[RDMA] Relaxed ordering", MooncakeLineKind::Info},
    {"removeSegmentDesc ", MooncakeLineKind::Info},
    {"registerMemoryRegion: chunk", MooncakeLineKind::Info},
    {"endpoint store", MooncakeLineKind::Info},
    {"Skipping unavailable device", MooncakeLineKind::Info},
    {"TE metadata refresh polling enabled", MooncakeLineKind::Info},
};

// Where a message names its peer: the text after the first of these keys.
constexpr std::string_view kPeerKeys[] = {
    "peer_nic: ",          "peer_nic=",    "Rail paused: peer=", ", peer=",        "for endpoint: ",
    "allocate endpoint: ", ", peer ",      "by peer ",           "connection to ", "with target ",
    "not found in ",       "peer server ", "connect() ",         "connect()",      "local.peer_nic_path: ",
    "descriptor, name ",   "seg="};
constexpr std::string_view kLocalKeys[] = {"local_nic: ", "local RNIC ",  "Context ",         "context=",
                                           "on context ", "for context ", "EndPoint: local ", "Disable device "};

void classify(MooncakeLogRecord& r) {
  const std::string_view msg = r.message;
  r.kind = MooncakeLineKind::Unknown;
  // "refresh polling enabled" is an INFO line that the metadata rule would catch first.
  if (msg.find("TE metadata refresh polling enabled") != std::string_view::npos) {
    r.kind = MooncakeLineKind::Info;
    return;
  }
  for (const Rule& rule : kRules)
    if (msg.find(rule.words) != std::string_view::npos) {
      r.kind = rule.kind;
      break;
    }
  if (r.kind == MooncakeLineKind::Unknown) return;
  // Newer worker_pool.cpp says what it did instead of "mark it inactive".
  if (msg.find("Cannot make connection for endpoint") != std::string_view::npos) {
    if (msg.find("local RNIC is inactive") != std::string_view::npos)
      r.kind = MooncakeLineKind::NicInactive;
    else if (msg.find("retrying without pausing") != std::string_view::npos)
      r.kind = MooncakeLineKind::PeerUnreachable;
  }
  for (const auto key : kPeerKeys)
    if (const auto at = msg.find(key); at != std::string_view::npos) {
      const std::string_view t = token(msg.substr(at + key.size()));
      if (t.empty() || t.find(':') == std::string_view::npos) continue;  // a NIC or segment id, not a server
      r.peer_nic = std::string(t);
      r.peer = MooncakeLogParser::serverOf(t);
      break;
    }
  for (const auto key : kLocalKeys)
    if (const auto at = msg.find(key); at != std::string_view::npos) {
      std::string_view t = token(msg.substr(at + key.size()));
      if (const auto at_dev = t.rfind('@'); at_dev != std::string_view::npos) t = t.substr(at_dev + 1);  // a NIC path
      // A device name has a number ("mlx5_0"); "local RNIC is inactive" names none.
      if (t.find_first_of("0123456789") == std::string_view::npos) continue;
      r.local_nic = std::string(t);
      break;
    }
}

}  // namespace

std::string MooncakeLogParser::serverOf(std::string_view nic_path) {
  const auto at = nic_path.find('@');
  return std::string(at == std::string_view::npos ? nic_path : nic_path.substr(0, at));
}

bool MooncakeLogParser::parsePrefix(std::string_view line, MooncakeLogRecord& r, std::string_view& rest) {
  // L[YYYY]MMDD HH:MM:SS.uuuuuu THREAD FILE:LINE] MESSAGE
  if (line.size() < 2) return false;
  const char sev = line[0];
  if (sev != 'I' && sev != 'W' && sev != 'E' && sev != 'F') return false;
  std::size_t i = 1;
  while (i < line.size() && isDigit(line[i])) ++i;
  const std::size_t date_len = i - 1;
  if (date_len != 4 && date_len != 8) return false;
  const auto field = [&](std::size_t at, std::size_t n) { return number(line.substr(at, n)).value_or(-1); };
  const int year = date_len == 8 ? field(1, 4) : 1970;
  const int month = field(i - 4, 2), day = field(i - 2, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  // " HH:MM:SS.uuuuuu"
  if (line.size() < i + 16 || line[i] != ' ' || line[i + 3] != ':' || line[i + 6] != ':' || line[i + 9] != '.')
    return false;
  const int hour = field(i + 1, 2), minute = field(i + 4, 2), second = field(i + 7, 2), micros = field(i + 10, 6);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60 || micros < 0) return false;
  i += 16;
  // thread id, right-aligned with spaces
  if (i >= line.size() || line[i] != ' ') return false;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t thread_at = i;
  while (i < line.size() && line[i] != ' ') ++i;
  if (i == thread_at || i >= line.size()) return false;
  const std::string_view thread = line.substr(thread_at, i - thread_at);
  ++i;
  // "file.cpp:123] "
  const std::size_t close = line.find("] ", i);
  const std::size_t end_close = close == std::string_view::npos && line.ends_with(']') ? line.size() - 1 : close;
  if (end_close == std::string_view::npos) return false;
  const std::string_view location = line.substr(i, end_close - i);
  const auto colon = location.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || location.find(' ') != std::string_view::npos) return false;
  const auto src_line = number(location.substr(colon + 1));
  if (!src_line) return false;
  r.severity = sev;
  r.has_year = date_len == 8;
  r.clock_s = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
              minute * 60 + second;
  r.micros = micros;
  r.thread = std::string(thread);
  r.file = std::string(location.substr(0, colon));
  r.line = *src_line;
  rest = end_close + 2 <= line.size() ? line.substr(end_close + 2) : std::string_view();
  return true;
}

MooncakeLogRecord MooncakeLogParser::parse(std::string_view line) {
  MooncakeLogRecord r;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  std::string_view msg;
  if (!parsePrefix(line, r, msg)) {
    r.kind = MooncakeLineKind::NotGlog;
    r.message = std::string(line.substr(0, kMaxMessage));
    return r;
  }
  r.message = std::string(msg.substr(0, kMaxMessage));
  classify(r);
  return r;
}

}  // namespace kvscope
