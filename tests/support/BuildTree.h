#pragma once
// Where a test finds the programs and data it uses, from the folder of its own executable (build/tests),
// so no absolute path is compiled into a test: build/bin holds kvscope and kvscope-cli, and CMake
// links build/tests/data to the repo's tests/data at configure time.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <QString>

namespace kvscope::test {

inline std::filesystem::path testExeDir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path(); }

inline QString kvscopeCli() {
  return QString::fromStdString((testExeDir().parent_path() / "bin" / "kvscope-cli").string());
}
inline QString kvscopeGui() {
  return QString::fromStdString((testExeDir().parent_path() / "bin" / "kvscope").string());
}

// tests/data in the source tree: the real samples (with their provenance in tests/data/README.md).
inline std::string testDataDir() { return (testExeDir() / "data").string(); }
inline std::string testDataPath(const std::string& rel) { return testDataDir() + "/" + rel; }

// The whole public traces, which the repo does not hold (tests/data/README.md says where they come
// from): the folder KVSCOPE_TRACE_DIR names, or "" when it is unset. Tests that need them skip
// with a message when it is "".
inline std::string fullTraceDir() {
  const char* dir = std::getenv("KVSCOPE_TRACE_DIR");
  return dir && *dir ? std::string(dir) : std::string();
}

}  // namespace kvscope::test

// The macros the tests were written with, now computed at run time.
#define KVSCOPE_CLI ::kvscope::test::kvscopeCli()
#define KVSCOPE_GUI ::kvscope::test::kvscopeGui()
