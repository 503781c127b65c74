#include "core/io/ResourceDir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/model/Error.h"

namespace fs = std::filesystem;

namespace kvscope {

std::vector<std::string> resourceDirCandidates() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KVSCOPE_RESOURCES"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share" / "kvscope").string());
  return dirs;
}

std::string resourceDir() {
  for (const std::string& dir : resourceDirCandidates()) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return dir;
  }
  return {};
}

std::string resourcePath(const std::string& sub) {
  const std::string dir = resourceDir();
  if (dir.empty()) {
    std::string tried;
    for (const std::string& d : resourceDirCandidates()) tried += (tried.empty() ? "" : ", ") + d;
    throw InputError("KVScope's resource folder (scenarios, profiles) was not found; looked in: " + tried +
                     ". Set KVSCOPE_RESOURCES to the folder that holds scenarios/ and profiles/.");
  }
  return (fs::path(dir) / sub).string();
}

}  // namespace kvscope
