#include "core/live/LineShapeCounter.h"

#include <algorithm>

namespace kvscope {

namespace {

bool isWordChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

}  // namespace

std::string LineShapeCounter::shapeOf(std::string_view message) {
  std::string out;
  std::size_t i = 0;
  while (i < message.size() && out.size() < kMaxShapeChars) {
    if (!isWordChar(message[i])) {
      const auto c = static_cast<unsigned char>(message[i]);
      out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
      ++i;
      continue;
    }
    std::size_t end = i;
    bool digit = false;
    while (end < message.size() && isWordChar(message[end])) digit |= message[end] >= '0' && message[end] <= '9', ++end;
    // Ids, counts, addresses and times differ line to line; the words around them do not.
    if (digit) {
      if (!out.ends_with("<n>")) out += "<n>";
    } else {
      out.append(message.substr(i, end - i));
    }
    i = end;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (i < message.size()) out += "...";
  return out;
}

std::string LineShapeCounter::describe(const Shape& s) {
  return std::to_string(s.count) + (s.count == 1 ? " line like \"" : " lines like \"") + s.shape + "\"";
}

void LineShapeCounter::add(std::string_view message) {
  ++total_;
  std::string shape = shapeOf(message);
  if (const auto it = shapes_.find(shape); it != shapes_.end()) {
    ++it->second;
    return;
  }
  if (shapes_.size() >= kMaxShapes) {
    ++others_;
    return;
  }
  shapes_.emplace(std::move(shape), 1);
}

std::vector<LineShapeCounter::Shape> LineShapeCounter::top(std::size_t n) const {
  std::vector<Shape> all;
  all.reserve(shapes_.size());
  for (const auto& [shape, count] : shapes_) all.push_back({shape, count});
  std::stable_sort(all.begin(), all.end(), [](const Shape& a, const Shape& b) { return a.count > b.count; });
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace kvscope
