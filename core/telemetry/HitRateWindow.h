#pragma once
// A prefix-cache hit rate over the last `window` of time: cached prompt tokens over prompt tokens
// of the requests that finished in it (and the unbounded cache's rate on the same requests), so a
// chart of it over time shows a worker losing its cache, which a whole-run rate would average away.
#include <cstdint>
#include <deque>

#include "core/model/Ids.h"

namespace kvscope {

class HitRateWindow {
 public:
  explicit HitRateWindow(SimTime window = secondsToTime(60)) : window_(window) {}
  void add(SimTime t, std::int64_t prompt, std::int64_t cached, std::int64_t ceiling) {
    entries_.push_back({t, prompt, cached, ceiling});
    prompt_ += prompt;
    cached_ += cached;
    ceiling_ += ceiling;
    advance(t);
  }
  // Forgets what finished before t - window.
  void advance(SimTime t) {
    while (!entries_.empty() && entries_.front().t < t - window_) {
      prompt_ -= entries_.front().prompt;
      cached_ -= entries_.front().cached;
      ceiling_ -= entries_.front().ceiling;
      entries_.pop_front();
    }
  }
  bool empty() const { return prompt_ <= 0; }
  std::int64_t prompt() const { return prompt_; }
  double rate() const { return prompt_ > 0 ? static_cast<double>(cached_) / static_cast<double>(prompt_) : 0.0; }
  double ceilingRate() const {
    return prompt_ > 0 ? static_cast<double>(ceiling_) / static_cast<double>(prompt_) : 0.0;
  }
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    SimTime t;
    std::int64_t prompt, cached, ceiling;
  };
  SimTime window_;
  std::deque<Entry> entries_;
  std::int64_t prompt_ = 0, cached_ = 0, ceiling_ = 0;
};

}  // namespace kvscope
