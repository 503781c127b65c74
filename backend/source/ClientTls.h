#pragma once
// TLS for the clients of `kvscope-cli serve` (the console's RemoteSource; ServerClient, behind
// `mark` and `tail`): off, or on with the system's root certificates or a root certificate file (a
// self-signed server's own certificate, the one `serve --tls-cert` was given).
#include <memory>
#include <string>

namespace grpc {
class ChannelCredentials;
}

namespace kvscope {

struct ClientTls {
  bool enabled = false;
  std::string root_cert_file;  // empty: the system's roots
};

// The channel credentials for `tls`. Reads the root certificate file now: throws InputError naming
// it when it cannot be read or holds no PEM certificate.
std::shared_ptr<grpc::ChannelCredentials> channelCredentials(const ClientTls& tls);

}  // namespace kvscope
