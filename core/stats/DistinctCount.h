#pragma once
// How many distinct ids (sessions) a stream has named.
//
// Exact while there are at most `exact_limit` of them, which every finite run the lab makes fits;
// past that it switches to a HyperLogLog estimate (2^14 one-byte registers, standard error about
// 0.8%) so a console watching a live cluster for days stays bounded. (No C++ HyperLogLog is packaged
// in Debian; this is the textbook algorithm with the small-range correction.)
#include <cstddef>
#include <cstdint>
#include <vector>

#include <absl/container/flat_hash_set.h>

namespace kvscope {

class DistinctCount {
 public:
  static constexpr std::size_t kDefaultExactLimit = std::size_t{1} << 16;

  DistinctCount() = default;
  explicit DistinctCount(std::size_t exact_limit) : exact_limit_(exact_limit) {}

  void add(std::uint64_t id);
  std::size_t count() const;
  bool exact() const { return registers_.empty(); }
  std::size_t memoryBytes() const;

 private:
  void addToSketch(std::uint64_t id);

  std::size_t exact_limit_ = kDefaultExactLimit;
  absl::flat_hash_set<std::uint64_t> ids_;  // exact mode
  std::vector<std::uint8_t> registers_;     // sketch mode
};

}  // namespace kvscope
