#include "app/cli/ClientTlsOptions.h"

namespace kvscope::cli {

void addClientTlsOptions(CLI::App& sub, ClientTls& tls) {
  sub.add_flag("--tls", tls.enabled, "Call the server over TLS (serve --tls-cert), trusting the system's roots");
  sub.add_option("--tls-ca", tls.root_cert_file,
                 "Over TLS, trust this PEM root certificate instead (e.g. a self-signed server's own)")
      ->check(CLI::ExistingFile)
      ->each([&tls](const std::string&) { tls.enabled = true; });
}

}  // namespace kvscope::cli
