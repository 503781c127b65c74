#pragma once
// A one-shot client of `kvscope-cli serve` for the command line (`mark`, `tail`) and scripts: one
// place that knows the channel settings (the receive limit of EventLimits.h), the bearer token and how
// a failed call reads, so app/cli holds no gRPC stub of its own. (The console's long-lived client,
// with reconnection and replay, is RemoteSource.)
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/source/ClientTls.h"
#include "core/events/Event.h"
#include "core/run/RunMarkBook.h"

namespace kvscope {

class ServerClient {
 public:
  // `token_file` empty: no authorization header. Throws InputError when the token or the TLS root
  // certificate cannot be read.
  ServerClient(std::string address, const std::string& token_file, const ClientTls& tls = {});

  // Control.MarkRun, waiting at most `timeout_s`: the markers the server applied, in order. Throws
  // InputError "ADDRESS: what the server said (gRPC code N)" on failure.
  std::vector<RunMarked> markRun(const RunMarkRequest& request, double timeout_s) const;

  // What Telemetry.Subscribe delivers, one call per message; returning false ends the stream.
  struct StreamCallbacks {
    std::function<bool(const Event&)> event;
    std::function<bool(std::uint64_t first_seq, std::uint64_t last_seq)> gap;  // events the server no longer holds
    std::function<void(const std::string& why)> undecodable;                   // a message that did not decode
  };
  // Subscribes from `from_seq` (0: as far back as the server holds) to `kinds` (empty: all) and
  // delivers until the stream ends or a callback says stop. Throws InputError as markRun does.
  void subscribe(std::uint64_t from_seq, const std::vector<std::string>& kinds, const StreamCallbacks& on) const;

 private:
  std::string address_;
  std::string authorization_;  // "Bearer ..." or empty
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
};

}  // namespace kvscope
