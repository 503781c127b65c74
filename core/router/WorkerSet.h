#pragma once
// A set of serving workers, one bit each up to kMaxWorkers (512: 64 bytes). The prefix walk keeps
// the workers still matching in one and intersects it with each block's holders; operations take
// only the words a cluster uses (`words`), so a 3-D cluster pays for one word, not eight.
#include <array>
#include <bit>
#include <cstdint>

#include "core/model/Ids.h"

namespace kvscope {

class WorkerSet {
 public:
  static constexpr int kWords = kMaxWorkers / 64;
  static constexpr int wordsFor(int num_workers) { return num_workers <= 0 ? 0 : (num_workers + 63) / 64; }

  // Workers 0..n-1.
  static WorkerSet first(int n) {
    WorkerSet s;
    for (int w = 0; w < kWords; ++w) {
      const int lo = w * 64;
      s.bits_[w] = n >= lo + 64 ? ~std::uint64_t{0} : n > lo ? (std::uint64_t{1} << (n - lo)) - 1 : 0;
    }
    return s;
  }

  bool test(WorkerId w) const { return (bits_[static_cast<std::size_t>(w) / 64] >> (w % 64) & 1) != 0; }
  void set(WorkerId w) { bits_[static_cast<std::size_t>(w) / 64] |= std::uint64_t{1} << (w % 64); }
  void reset(WorkerId w) { bits_[static_cast<std::size_t>(w) / 64] &= ~(std::uint64_t{1} << (w % 64)); }
  void clear(int words = kWords) {
    for (int i = 0; i < words; ++i) bits_[i] = 0;
  }
  int count(int words = kWords) const {
    int n = 0;
    for (int i = 0; i < words; ++i) n += std::popcount(bits_[i]);
    return n;
  }
  bool any(int words = kWords) const {
    for (int i = 0; i < words; ++i)
      if (bits_[i] != 0) return true;
    return false;
  }
  // this &= other, over the first `words` words.
  void intersect(const WorkerSet& other, int words = kWords) {
    for (int i = 0; i < words; ++i) bits_[i] &= other.bits_[i];
  }
  void unite(const WorkerSet& other, int words = kWords) {
    for (int i = 0; i < words; ++i) bits_[i] |= other.bits_[i];
  }
  // The members of this set missing from `other`.
  WorkerSet minus(const WorkerSet& other, int words = kWords) const {
    WorkerSet d;
    for (int i = 0; i < words; ++i) d.bits_[i] = bits_[i] & ~other.bits_[i];
    return d;
  }
  template <typename F>
  void forEach(F&& f, int words = kWords) const {
    for (int i = 0; i < words; ++i)
      for (std::uint64_t m = bits_[i]; m != 0; m &= m - 1) f(static_cast<WorkerId>(i * 64 + std::countr_zero(m)));
  }
  bool operator==(const WorkerSet&) const = default;

 private:
  std::array<std::uint64_t, kWords> bits_{};
};

}  // namespace kvscope
