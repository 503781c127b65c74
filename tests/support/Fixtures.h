#pragma once
// The real public /metrics samples in tests/data/fixtures/ (SGLang's and vLLM's, copied whole; their
// provenance is in tests/data/README.md), read whole. A missing file is an error, not an empty body.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tests/support/BuildTree.h"

namespace kvscope::test {

inline std::string fixture(const char* name) {
  const std::string path = testDataPath(std::string("fixtures/") + name);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the test fixture " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kvscope::test
