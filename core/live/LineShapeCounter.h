#pragma once
// Counts log lines no parser understood by their shape, so that a new upstream format shows
// itself instead of vanishing: every word with a digit in it becomes `<n>`
// ("Xyz batch. #foo: 12, 0.5" -> "Xyz batch. #foo: <n>, <n>"), and the session's status or a
// report says `12 lines like "Xyz batch. #foo: <n>, <n>"`. Bounded: at most kMaxShapes distinct
// shapes are kept, later new shapes only add to others().
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

class LineShapeCounter {
 public:
  static constexpr std::size_t kMaxShapes = 64;
  static constexpr std::size_t kMaxShapeChars = 96;

  struct Shape {
    std::string shape;
    long count = 0;
  };

  static std::string shapeOf(std::string_view message);
  // `12 lines like "Xyz batch. #foo: <n>"`
  static std::string describe(const Shape& s);

  void add(std::string_view message);
  // The most frequent shapes first (ties in shape order), at most `n`.
  std::vector<Shape> top(std::size_t n) const;
  long total() const { return total_; }
  long others() const { return others_; }  // lines whose shape came after the table was full

 private:
  std::map<std::string, long> shapes_;
  long total_ = 0;
  long others_ = 0;
};

}  // namespace kvscope
