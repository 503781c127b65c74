#pragma once
// A scalar distribution as written in scenario files:
//   {"fixed": 12000} | {"uniform": [a, b]} | {"lognormal": {"median": m, "p90": p}}
//   optionally with "min" and "max" clamps.
// Sampling uses our own transforms of a 64-bit generator (std:: distributions differ between
// standard libraries), so a seed gives the same numbers wherever libm's log/exp/cos agree.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace kvscope {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform01();  // [0, 1)
  double normal();     // standard normal (Box-Muller)
 private:
  std::uint64_t state_;
};

struct Distribution {
  enum class Kind { Fixed, Uniform, LogNormal } kind = Kind::Fixed;
  double a = 0;  // fixed value | uniform low | lognormal median
  double b = 0;  // uniform high | lognormal p90
  double min = -1e300;
  double max = 1e300;

  double sample(SplitMix64& rng) const;
  // Parses the JSON form; `where` names the field for error messages.
  static Distribution fromJson(const nlohmann::json& j, const std::string& where);
  static Distribution fixed(double v) { return Distribution{Kind::Fixed, v, v}; }
};

}  // namespace kvscope
