#pragma once
// Turns what the user chose (command line or File menu) into a Source; throws InputError with a
// message the user can act on, before anything starts.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/source/Source.h"

namespace kvscope {

struct SourceSpec {
  enum Kind { Simulation, Remote, Recording, Live } kind = Simulation;
  std::string target = "e3-load-floor";  // scenario name or file, HOST:PORT, .kvrec path, or cluster file
  std::string token_file;                // Remote
  bool tls = false;                      // Remote: over TLS
  std::string tls_ca;                    // Remote, TLS: the root certificate to trust (empty: the system's)
  double speed = 10;                     // x real (or recorded) time
  std::map<std::string, double> knobs;   // Simulation: --set NAME=VALUE
  std::optional<std::uint64_t> seed;     // Simulation
  std::optional<double> duration_s;      // Simulation: stop the run here
};

std::unique_ptr<Source> makeSource(const SourceSpec& spec);

}  // namespace kvscope
