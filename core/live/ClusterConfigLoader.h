#pragma once
// Reads a cluster file (YAML; JSON is YAML too). Every mistake throws InputError naming the file,
// the line and the field ("cluster.yaml:7: field 'workers[1].role': expected prefill, decode or
// unified, got 'decoder'"), unknown keys included, so a typo never silently drops a worker's logs.
#include <string>

#include "core/live/ClusterConfig.h"

namespace kvscope {

class ClusterConfigLoader {
 public:
  static ClusterConfig load(const std::string& path);
  // `file` names the text in messages; relative log paths are resolved against its directory.
  static ClusterConfig parse(const std::string& text, const std::string& file);
};

// "" when `endpoint` is one a KV event subscriber can connect to (tcp://HOST:PORT or ipc://PATH),
// else what is wrong with it. The engines' own wildcard (tcp://*:5557) is theirs to bind, not ours.
std::string kvEventEndpointProblem(const std::string& endpoint);

}  // namespace kvscope
