#pragma once
// RemoteSource's wait before each reconnect: exponential, 0.5 s doubling to 10 s, each delay times
// a jitter drawn from [0.8, 1.2) (and capped at 10 s), so consoles that lost the same server do not
// all come back at the same instant. Not thread-safe: its owner's lock guards it.
#include <random>

namespace kvscope {

class ReconnectBackoff {
 public:
  static constexpr double kFirstSeconds = 0.5;
  static constexpr double kMaxSeconds = 10;

  // The delay before the next attempt, in seconds; counts the attempt.
  double next();
  // Messages flowed again: the next failure starts from the first delay.
  void reset() { attempt_ = 0; }

 private:
  int attempt_ = 0;  // failed attempts since messages last flowed
  std::mt19937 random_{std::random_device{}()};
};

}  // namespace kvscope
