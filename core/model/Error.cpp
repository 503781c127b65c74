#include "core/model/Error.h"

namespace kvscope {

std::string formatInputError(const std::string& file, long line, const std::string& field,
                             const std::string& what) {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (!field.empty()) out += "field '" + field + "': ";
  out += what;
  return out;
}

}  // namespace kvscope
