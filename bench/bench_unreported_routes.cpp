// Routes nobody reports: a client that routes and crashes, for ever. The live router forgets them
// (unreported_expiry_s, max_tracked_*; core/run/UnreportedRequests.h), so its memory must go flat
// once the tables are full. Prints, after 10K, 100K and 1M unreported routes of realistic prompts
// (2,500 block hashes each, ~60K tokens), the process's RSS now and the route rate of that stretch,
// under the default caps. A benchmark: it measures and asserts nothing.
//
//   bench_unreported_routes [--routes 1000000] [--hashes 2500] [--policy kv-aware]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "bench/PeakRss.h"
#include "core/run/LiveRouter.h"

using namespace kvscope;

namespace {
double rssMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}
}  // namespace

int main(int argc, char** argv) {
  long routes = 1'000'000, hashes = 2500;
  std::string policy = "kv-aware";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--routes"))
      routes = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--hashes"))
      hashes = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--policy"))
      policy = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: bench_unreported_routes [--routes N] [--hashes N] [--policy NAME]\n");
      return 2;
    }
  }
  LiveClusterSpec spec;
  for (const char* n : {"D0", "D1", "D2"}) spec.workers.push_back({n, WorkerRole::Decode, 10'000'000});
  spec.policy = policy;
  LiveRouter router(spec, std::vector<EventSink*>{});
  std::printf(
      "policy %s, %ld hashes per prompt, default caps (max_tracked_requests 65536, per worker 16384, "
      "block hashes 4M); RSS before: %.1f MiB\n",
      policy.c_str(), hashes, rssMiB());
  LiveRouter::RouteInput in;
  in.hashes.resize(static_cast<std::size_t>(hashes));
  in.input_tokens = hashes * 24;
  auto start = std::chrono::steady_clock::now();
  long done = 0;
  for (long next : {10'000L, 100'000L, 1'000'000L, 10'000'000L}) {
    if (next > routes) next = routes;
    if (next <= done) break;
    const auto t0 = std::chrono::steady_clock::now();
    const long from = done;
    for (; done < next; ++done) {
      in.request = static_cast<RequestId>(done + 1);
      in.session = static_cast<SessionId>(done + 1);  // every route a new session: no reuse to help
      for (long h = 0; h < hashes; ++h)
        in.hashes[static_cast<std::size_t>(h)] = (static_cast<BlockHash>(done) << 16) + static_cast<BlockHash>(h);
      router.route(in);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("after %8ld unreported routes: RSS %7.1f MiB (peak %7.1f), %8.0f routes/s over the last %ld\n", done,
                rssMiB(), bench::peakRssMiB(), static_cast<double>(done - from) / s, done - from);
  }
  std::printf("total %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  router.stop();
  return 0;
}
