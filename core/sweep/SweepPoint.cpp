#include "core/sweep/SweepPoint.h"

namespace kvscope {

std::string SweepPoint::label() const {
  std::string out;
  for (const auto& [axis, value] : coords) out += (out.empty() ? "" : ",") + axis + "=" + value;
  return out.empty() ? "run" : out;
}

std::string SweepPoint::fileStem() const {
  std::string out;
  for (const auto& [axis, value] : coords) out += (out.empty() ? "" : "_") + axis + "=" + value;
  if (out.empty()) out = "run";
  for (char& c : out)
    if (c == '/' || c == '\\' || c == ',' || c == ' ' || c == ':') c = '-';
  return out;
}

}  // namespace kvscope
