#include "core/stats/DistinctCount.h"

#include <bit>
#include <cmath>

namespace kvscope {

namespace {
constexpr int kPrecision = 14;
constexpr std::size_t kRegisters = std::size_t{1} << kPrecision;

// splitmix64's finaliser: session ids are small consecutive integers, HyperLogLog needs every bit
// of the hash to look random.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

void DistinctCount::add(std::uint64_t id) {
  if (!exact()) return addToSketch(id);
  ids_.insert(id);
  if (ids_.size() <= exact_limit_) return;
  registers_.assign(kRegisters, 0);
  for (std::uint64_t known : ids_) addToSketch(known);
  absl::flat_hash_set<std::uint64_t>().swap(ids_);
}

void DistinctCount::addToSketch(std::uint64_t id) {
  const std::uint64_t h = mix(id);
  const std::size_t index = h >> (64 - kPrecision);
  // Position of the first 1 bit in the remaining 50 bits (51 when they are all 0).
  const auto rank = static_cast<std::uint8_t>(std::min(std::countl_zero(h << kPrecision), 64 - kPrecision) + 1);
  if (rank > registers_[index]) registers_[index] = rank;
}

std::size_t DistinctCount::count() const {
  if (exact()) return ids_.size();
  const double m = static_cast<double>(kRegisters);
  double harmonic = 0;
  std::size_t zeros = 0;
  for (std::uint8_t r : registers_) {
    harmonic += std::ldexp(1.0, -r);
    zeros += r == 0;
  }
  const double alpha = 0.7213 / (1 + 1.079 / m);
  double estimate = alpha * m * m / harmonic;
  if (estimate <= 2.5 * m && zeros > 0) estimate = m * std::log(m / static_cast<double>(zeros));  // linear counting
  return static_cast<std::size_t>(std::llround(estimate));
}

std::size_t DistinctCount::memoryBytes() const {
  // A flat_hash_set slot is the key plus one control byte.
  return sizeof(*this) + ids_.capacity() * (sizeof(std::uint64_t) + 1) + registers_.capacity();
}

}  // namespace kvscope
