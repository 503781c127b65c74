#include "core/model/Distribution.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <nlohmann/json.hpp>

#include "core/model/Error.h"

namespace kvscope {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double SplitMix64::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double SplitMix64::normal() {
  const double u1 = 1.0 - uniform01();  // (0, 1]
  const double u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Distribution::sample(SplitMix64& rng) const {
  double v = a;
  switch (kind) {
    case Kind::Fixed:
      break;
    case Kind::Uniform:
      v = a + (b - a) * rng.uniform01();
      break;
    case Kind::LogNormal: {
      // median = exp(mu); p90 = exp(mu + 1.2816 sigma)
      const double mu = std::log(a);
      const double sigma = std::log(b / a) / 1.2815515655446004;
      v = std::exp(mu + sigma * rng.normal());
      break;
    }
  }
  return std::clamp(v, min, max);
}

Distribution Distribution::fromJson(const nlohmann::json& j, const std::string& where) {
  auto fail = [&](const std::string& what) { throw InputError(where + ": " + what); };
  Distribution d;
  if (j.is_number()) return fixed(j.get<double>());
  if (!j.is_object()) fail("expected a number or {\"fixed\"|\"uniform\"|\"lognormal\": ...}");
  if (j.contains("fixed")) {
    if (!j["fixed"].is_number()) fail("'fixed' expects a number");
    d = fixed(j["fixed"].get<double>());
  } else if (j.contains("uniform")) {
    const auto& u = j["uniform"];
    if (!u.is_array() || u.size() != 2 || !u[0].is_number() || !u[1].is_number()) fail("'uniform' expects [low, high]");
    d.kind = Kind::Uniform;
    d.a = u[0].get<double>();
    d.b = u[1].get<double>();
    if (d.b < d.a) fail("'uniform' expects low <= high");
  } else if (j.contains("lognormal")) {
    const auto& l = j["lognormal"];
    if (!l.is_object() || !l.contains("median") || !l.contains("p90") || !l["median"].is_number() ||
        !l["p90"].is_number())
      fail("'lognormal' expects {\"median\": m, \"p90\": p}");
    d.kind = Kind::LogNormal;
    d.a = l["median"].get<double>();
    d.b = l["p90"].get<double>();
    if (d.a <= 0 || d.b < d.a) fail("'lognormal' expects 0 < median <= p90");
  } else {
    fail("expected one of 'fixed', 'uniform', 'lognormal'");
  }
  for (const char* bound : {"min", "max"})
    if (j.contains(bound) && !j[bound].is_number()) fail(std::string("'") + bound + "' expects a number");
  if (j.contains("min")) d.min = j["min"].get<double>();
  if (j.contains("max")) d.max = j["max"].get<double>();
  if (d.min > d.max) fail("expected min <= max");
  return d;
}

}  // namespace kvscope
