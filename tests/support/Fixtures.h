#pragma once
// The real public samples in ../shared/data/fixtures (SGLang's and vLLM's /metrics), read whole.
#include <fstream>
#include <sstream>
#include <string>

namespace kvscope::test {

inline std::string fixture(const char* name) {
  std::ifstream in(std::string(KVSCOPE_SHARED_DATA_DIR "/fixtures/") + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kvscope::test
