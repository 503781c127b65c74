// Route latency: round trips of kvscope.v1.Router/Route on loopback at a fixed
// request rate (default 5,000/s), and the decision alone in process (LiveRouter::route), with
// e3-like prompts: a shared system prompt plus a session history that grows by turn. Between
// requests the cluster "stores" each prompt's new blocks (in process, as Report would: SGLang's KV
// events name the blocks a turn adds, or the whole prompt when it moved), so the prefix index is as
// full as in a live run; and each request finishes --in-flight requests after it was routed (default
// 1,000: 200 ms at 5,000/s), so the router tracks a live run's backlog, not every request ever sent.
// A plain main: it paces an open-loop schedule and prints
// percentiles; the requests are sent by --clients threads, each at rate/clients.
//
// --floor 1 sends GetCluster (which does nothing but answer) on the same schedule instead: gRPC's own
// round trip on this machine, so the gap to Route is what the router adds.
// --unix 1 serves on a Unix domain socket (serve's --listen unix:PATH, for a router on the same host)
// instead of TCP loopback.
//
//   bench_router_rpc [--rate 5000] [--seconds 10] [--blocks 2000] [--clients 2] [--workers 3] [--in-flight 1000]
//                    [--floor 1] [--unix 1]
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/service/KvscopeServer.h"
#include "backend/service/TelemetryHub.h"
#include "core/run/LiveRouter.h"
#include "kvscope/v1/router.grpc.pb.h"

using namespace kvscope;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  double rate = 5000, seconds = 10;
  int blocks = 2000, clients = 2, workers = 3, sessions = 400, in_flight = 1000;
  bool floor = false;
  bool unix_socket = false;
};

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q / 100 * static_cast<double>(v.size() - 1) + 0.5))];
}

void print(const char* what, const std::vector<double>& us) {
  std::printf("%s: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f us  (n=%zu)\n", what, pct(us, 50), pct(us, 90), pct(us, 99),
              us.empty() ? 0 : *std::max_element(us.begin(), us.end()), us.size());
}

// Request i's prompt: 100 shared blocks, then its session's history, longer each turn.
struct Prompt {
  SessionId session;
  std::int32_t turn;
  std::vector<BlockHash> hashes;
};
Prompt promptFor(std::uint64_t i, const Options& o) {
  Prompt p;
  p.session = 1 + i % static_cast<std::uint64_t>(o.sessions);
  p.turn = static_cast<std::int32_t>(1 + i / static_cast<std::uint64_t>(o.sessions));
  const int shared = std::min(100, o.blocks);
  const int own = std::max(0, o.blocks - shared - 200) + std::min(200, p.turn * 10);
  for (int b = 0; b < shared; ++b) p.hashes.push_back(0xB0000000ULL + static_cast<BlockHash>(b));
  for (int b = 0; b < own; ++b) p.hashes.push_back((p.session << 24) + static_cast<BlockHash>(b));
  return p;
}

// What the cluster reports after a request, as Report would: the blocks its worker did not hold
// yet (per session: where it lives and how many of its blocks are stored there), and, `in_flight`
// requests later, that it finished. Without the completions the router would track every request
// ever routed (each with its prompt's hashes, and counted in its worker's queue), which no cluster
// does: the decision would be timed against an ever-growing backlog.
class ClusterReports {
 public:
  ClusterReports(int sessions, int in_flight)
      : where_(static_cast<std::size_t>(sessions) + 1, {kNoWorker, 0}),
        in_flight_(static_cast<std::size_t>(in_flight)) {}
  void report(LiveRouter& router, RequestId request, WorkerId worker, const Prompt& p) {
    if (worker == kNoWorker) return;
    std::lock_guard lock(mutex_);
    auto& [w, stored] = where_[p.session];
    if (w != worker) w = worker, stored = 0;
    if (stored < p.hashes.size()) {
      router.blocksStored(worker, p.session, std::span(p.hashes).subspan(stored), nullptr);
      stored = p.hashes.size();
    }
    RequestDone done;
    done.request = request;
    done.session = p.session;
    done.turn = p.turn;
    done.worker = worker;
    routed_.push_back(std::move(done));
    for (; routed_.size() > in_flight_; routed_.pop_front()) router.observe(routed_.front(), nullptr);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<WorkerId, std::size_t>> where_;
  std::size_t in_flight_;
  std::deque<RequestDone> routed_;  // oldest first
};

LiveClusterSpec cluster(const Options& o) {
  LiveClusterSpec spec;
  for (int w = 0; w < o.workers; ++w) spec.workers.push_back({"D" + std::to_string(w), WorkerRole::Decode, 850000});
  spec.prefill.push_back({"P0", WorkerRole::Prefill, 0});
  spec.knobs["K"] = 200;
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (flag == "--rate")
      o.rate = v;
    else if (flag == "--seconds")
      o.seconds = v;
    else if (flag == "--blocks")
      o.blocks = static_cast<int>(v);
    else if (flag == "--clients")
      o.clients = std::max(1, static_cast<int>(v));
    else if (flag == "--workers")
      o.workers = static_cast<int>(v);
    else if (flag == "--floor")
      o.floor = v != 0;
    else if (flag == "--unix")
      o.unix_socket = v != 0;
    else if (flag == "--in-flight")
      o.in_flight = std::max(0, static_cast<int>(v));
    else {
      std::fprintf(stderr,
                   "usage: %s [--rate N] [--seconds S] [--blocks N] [--clients N] [--workers N] [--in-flight N] "
                   "[--floor 1] [--unix 1]\n",
                   argv[0]);
      return 2;
    }
  }
  const auto requests = static_cast<std::uint64_t>(o.rate * o.seconds);
  std::printf(
      "bench_router_rpc: %d decode workers, kv-aware K=200, prompts of ~%d blocks, %llu requests at %.0f/s from %d "
      "client threads, "
      "each finishing %d requests later\n",
      o.workers, o.blocks, static_cast<unsigned long long>(requests), o.rate, o.clients, o.in_flight);

  // In process: the decision alone (LiveRouter::route, which includes publishing the route event).
  {
    TelemetryHub hub;
    LiveRouter router(cluster(o), {&hub});
    ClusterReports reports(o.sessions, o.in_flight);
    std::vector<double> us;
    const std::uint64_t n = std::min<std::uint64_t>(requests, 20000);
    for (std::uint64_t i = 0; i < n; ++i) {
      const Prompt p = promptFor(i, o);
      LiveRouter::RouteInput in{i + 1,    p.session, p.turn, static_cast<std::int64_t>(p.hashes.size()) * 24,
                                p.hashes, {}};
      const auto t0 = Clock::now();
      const auto out = router.route(in);
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      reports.report(router, i + 1, out.decision.chosen, p);
    }
    print("in-process LiveRouter::route", us);
  }

  // Over gRPC on loopback: the whole round trip a router would see.
  TelemetryHub hub;
  LiveRouter router(cluster(o), {&hub});
  ClusterReports reports(o.sessions, o.in_flight);
  std::string error;
  ServerOptions options;
  options.listen = "127.0.0.1:0";  // any free port, no token
  std::string socket_dir;
  if (o.unix_socket) {
    char dir[] = "/tmp/bench_router_rpc.XXXXXX";
    if (!::mkdtemp(dir)) {
      std::perror("mkdtemp");
      return 1;
    }
    socket_dir = dir;
    options.listen = "unix:" + socket_dir + "/router.sock";
  }
  auto server = KvscopeServer::start(options, hub, router, &error, &router);
  if (!server) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  const std::string target = o.unix_socket ? options.listen : "127.0.0.1:" + std::to_string(server->port());
  const char* transport = o.unix_socket ? "a Unix socket" : "loopback";
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(o.clients));
  std::atomic<long> late{0}, failed{0};
  const auto start = Clock::now() + std::chrono::milliseconds(200);
  const double interval_s = static_cast<double>(o.clients) / o.rate;
  std::vector<std::thread> clients;
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&, c] {
      auto stub = v1::Router::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
      auto& mine = latencies[static_cast<std::size_t>(c)];
      for (std::uint64_t k = 0;; ++k) {
        const std::uint64_t i = k * static_cast<std::uint64_t>(o.clients) + static_cast<std::uint64_t>(c);
        if (i >= requests) break;
        const Prompt p = promptFor(i, o);
        v1::RouteRequest request;
        request.set_request_id(i + 1);
        request.set_session_id(p.session);
        request.set_turn(p.turn);
        request.set_input_tokens(static_cast<std::int64_t>(p.hashes.size()) * 24);
        *request.mutable_block_hashes() = {p.hashes.begin(), p.hashes.end()};
        // Open loop: each request has its slot; a late one is sent at once and counted.
        const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(static_cast<double>(k) * interval_s));
        if (Clock::now() > due + std::chrono::milliseconds(1)) ++late;
        std::this_thread::sleep_until(due);
        grpc::ClientContext ctx;
        if (o.floor) {
          v1::Cluster cluster;
          const auto t0 = Clock::now();
          if (!stub->GetCluster(&ctx, v1::GetClusterRequest(), &cluster).ok()) ++failed;
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
          continue;
        }
        v1::RouteReply reply;
        const auto t0 = Clock::now();
        const grpc::Status status = stub->Route(&ctx, request, &reply);
        mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (!status.ok())
          ++failed;
        else
          reports.report(router, i + 1, reply.worker(), p);
      }
    });
  }
  for (auto& t : clients) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  print(
      (std::string(o.floor ? "GetCluster round trip (gRPC's floor)" : "Route round trip") + " on " + transport).c_str(),
      all);
  std::printf("achieved %.0f requests/s over %.1f s; %ld sent late (> 1 ms behind schedule), %ld failed\n",
              static_cast<double>(all.size()) / wall, wall, late.load(), failed.load());
  server->shutdown();
  if (!socket_dir.empty()) {
    std::remove((socket_dir + "/router.sock").c_str());
    ::rmdir(socket_dir.c_str());
  }
  return failed.load() == 0 ? 0 : 1;
}
