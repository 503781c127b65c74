#include "core/live/LogFieldReader.h"

#include <string>

#include "core/model/Error.h"

namespace kvscope {

void LogFieldReader::fail(std::string_view field, std::string_view expected, std::string_view got) {
  if (failed_) return;
  failed_ = true;
  r_.kind = LogLineKind::Malformed;
  r_.problem = "field '" + std::string(field) + "': expected " + std::string(expected) + ", got " + quotedExcerpt(got);
}

std::int64_t LogFieldReader::integer(std::string_view text, std::string_view key, std::string_view field,
                                     bool required) {
  const auto v = logtext::valueAfter(text, key);
  if (!v) {
    if (required) fail(field, "an integer", "nothing");
    return -1;
  }
  const auto n = logtext::toInt(*v);
  if (!n || *n < 0) {
    fail(field, "an integer >= 0", *v);
    return -1;
  }
  return *n;
}

}  // namespace kvscope
