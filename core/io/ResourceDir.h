#pragma once
// Where KVScope's data files (scenarios, profiles, clusters, sweeps) are found at run time: no path
// is compiled in, so the same binary works in the build tree, installed under a prefix, or unpacked
// from the .deb anywhere. Looked up in this order:
//   1. $KVSCOPE_RESOURCES (a folder holding scenarios/, profiles/, ...);
//   2. <folder of the running executable>/../share/kvscope (installed: PREFIX/bin -> PREFIX/share;
//      build tree: build/bin and build/tests -> build/share/kvscope, a link CMake makes to resources/).
#include <string>
#include <vector>

namespace kvscope {

// The resource folder, or an empty string when none of the candidates exists.
std::string resourceDir();
// The folders resourceDir() tried, in order (for an error message that says where it looked).
std::vector<std::string> resourceDirCandidates();
// resourceDir() + "/" + sub; throws InputError naming the folders tried when there is none.
std::string resourcePath(const std::string& sub);

}  // namespace kvscope
