#pragma once
// The real public samples in the test data folder (fixtures/) (SGLang's and vLLM's /metrics), read whole.
#include <fstream>
#include <sstream>
#include <string>

#include "support/BuildTree.h"

namespace kvscope::test {

inline std::string fixture(const char* name) {
  std::ifstream in(sharedDataPath(std::string("fixtures/") + name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kvscope::test
