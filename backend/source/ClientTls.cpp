#include "backend/source/ClientTls.h"

#include <fstream>
#include <sstream>

#include <grpcpp/security/credentials.h>

#include "core/model/Error.h"

namespace kvscope {

namespace {

// A PEM certificate's armour: a BEGIN line, then an END line, each at a line's start (a binary
// holding the words, as this program does, is no certificate).
std::size_t lineAt(const std::string& text, const std::string& line, std::size_t from = 0) {
  for (auto at = text.find(line, from); at != std::string::npos; at = text.find(line, at + 1))
    if (at == 0 || text[at - 1] == '\n') return at;
  return std::string::npos;
}

bool holdsPemCertificate(const std::string& text) {
  const auto begin = lineAt(text, "-----BEGIN CERTIFICATE-----");
  return begin != std::string::npos && lineAt(text, "-----END CERTIFICATE-----", begin) != std::string::npos;
}

}  // namespace

std::shared_ptr<grpc::ChannelCredentials> channelCredentials(const ClientTls& tls) {
  if (!tls.enabled) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  if (!tls.root_cert_file.empty()) {
    std::ifstream in(tls.root_cert_file, std::ios::binary);
    std::ostringstream text;
    if (!in || !(text << in.rdbuf())) throw InputError("root certificate '" + tls.root_cert_file + "': cannot read it");
    ssl.pem_root_certs = text.str();
    // gRPC would only fail at the first call, as an unreachable server: say what is wrong now.
    if (!holdsPemCertificate(ssl.pem_root_certs))
      throw InputError("root certificate '" + tls.root_cert_file + "': no PEM certificate in it");
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace kvscope
