#pragma once
// This build's version and git revision, for --version. Defined in a .cpp generated at build time
// (cmake/WriteBuildInfo.cmake), not by a compile definition, so that a new commit relinks the two
// programs and recompiles nothing else.
#include <string>

namespace kvscope {

const char* buildVersion();   // the project's version, e.g. "0.1.0"
const char* buildRevision();  // e.g. "ee7a7bb1c2d3", "ee7a7bb1c2d3-dirty", or "unknown" outside git

// "0.1.0 (git ee7a7bb1c2d3)": what `kvscope --version` and `kvscope-cli --version` print after the name.
inline std::string versionLine() { return std::string(buildVersion()) + " (git " + buildRevision() + ")"; }

}  // namespace kvscope
