#include "backend/source/ReconnectBackoff.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

double ReconnectBackoff::next() {
  const double base = std::min(kMaxSeconds, kFirstSeconds * std::pow(2.0, attempt_));
  attempt_ = std::min(attempt_ + 1, 30);
  // Jitter keeps consoles that lost the same server from all coming back at the same instant.
  return std::min(kMaxSeconds, base * std::uniform_real_distribution<double>(0.8, 1.2)(random_));
}

}  // namespace kvscope
