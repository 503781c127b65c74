#pragma once
// Totals fed by numbers from outside (a router's Report, a recording's frames): a negative amount
// adds nothing and a sum stops at its type's maximum instead of wrapping, so no summary or metric
// ever prints a negative count or INT64_MIN.
#include <concepts>
#include <limits>

namespace kvscope {

template <std::integral Total, std::integral Amount>
void addClamped(Total& total, Amount amount) {
  if (amount <= 0) return;
  if (__builtin_add_overflow(total, amount, &total)) total = std::numeric_limits<Total>::max();
}

}  // namespace kvscope
