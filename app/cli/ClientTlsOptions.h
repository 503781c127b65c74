#pragma once
// --tls and --tls-ca for the subcommands that call `kvscope-cli serve` (mark, tail): the same two
// options, worded once.
#include <CLI/CLI.hpp>

#include "backend/source/ClientTls.h"

namespace kvscope::cli {

// `tls` lives as long as the subcommand's closure (a member of its shared arguments).
void addClientTlsOptions(CLI::App& sub, ClientTls& tls);

}  // namespace kvscope::cli
