#pragma once
// Runs jobs 0..count-1 on up to `threads` threads, each job once, in index order of starting (a
// thread takes the next index when it is free). Before taking a job a thread checks `keep_going`;
// once it says no, no new job starts (those running finish). The sweep and the calibration runs
// share it: many simulations, a few cores.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace kvscope {

inline void runParallelJobs(std::size_t count, unsigned threads, const std::function<bool()>& keep_going,
                            const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    while (keep_going()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      job(i);
    }
  };
  if (count == 0) return;
  const unsigned n = std::max(1u, static_cast<unsigned>(std::min<std::size_t>(count, threads)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
}

}  // namespace kvscope
