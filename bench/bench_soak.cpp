// Soak: the real `kvscope-cli serve` under everything at once for a long time.
//  - a simulation served at high speed (--speed, looped long enough for the whole soak) with
//    --subscribers Telemetry streams held open (--silent of them never read), --churn of them
//    cancelled and replaced each second, its /metrics scraped every --scrape-ms while --idle
//    sockets sit silent and --trickle sockets dribble a request head on the same port;
//  - a second `serve --router D0,D1,D2` (the Router service exists only around a real cluster's
//    router) taking Router.Report streams at --report-rate observations/s, one in --invalid-every
//    invalid (each ends its stream with INVALID_ARGUMENT), also scraped;
//  - unreported routes: the same router takes Route calls at --unreported-rate per second that are
//    never reported (crashed clients, --flood-hashes block hashes each, a new session each), and
//    forgets them after --unreported-expiry seconds or over its caps; a SetKnobs flips K each second;
//  - hoarded streams: --hoard WatchKnobs streams on the router that never read (the router caps
//    them), and the --silent Telemetry streams, which the server ends once their window has stayed
//    full for --stalled-subscriber seconds. Each interval a fresh Subscribe, as the console makes,
//    must still get its first event ("console in").
// Every --interval seconds it prints the run's pace (simulated seconds per wall second, from
// GetState), both servers' RSS (from /proc) and CPU, the subscribers really connected, scrape
// latency and the Report counts; at the end, the whole soak's figures. A benchmark: it measures and
// asserts nothing (exit 1 only when a server cannot be started or dies).
//
//   bench_soak [--seconds 600] [--subscribers 500] [--silent 50] [--churn 5] [--speed 2000]
//              [--scenario e3-load-floor] [--idle 32] [--trickle 8] [--scrape-ms 1000]
//              [--report-rate 200] [--invalid-every 10] [--interval 30] [--connections 16] [--cli PATH]
//              [--unreported-rate 300] [--flood-hashes 2500] [--unreported-expiry 60] [--hoard 300]
//              [--stalled-subscriber 30]
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/soak/MetricsProbe.h"
#include "bench/soak/ReportFeeder.h"
#include "bench/soak/RouteFlood.h"
#include "bench/soak/ServeProcess.h"
#include "bench/soak/SubscriberPool.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

using namespace kvscope;
using namespace kvscope::soak;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  double seconds = 600, speed = 2000, report_rate = 200, interval = 0, unreported_rate = 300, unreported_expiry = 60,
         stalled_subscriber = 30;
  int subscribers = 500, silent = 50, churn = 5, idle = 32, trickle = 8, scrape_ms = 1000, invalid_every = 10,
      connections = 16, flood_hashes = 2500, hoard = 300;
  std::string scenario = "e3-load-floor", cli;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(
      stderr,
      "bench_soak: %s\nusage: bench_soak [--seconds S] [--subscribers N] [--silent N] [--churn N/s] [--speed X]\n"
      "  [--scenario NAME] [--idle N] [--trickle N] [--scrape-ms MS] [--report-rate N/s] [--invalid-every N]\n"
      "  [--interval S] [--connections N] [--cli PATH] [--unreported-rate N/s] [--flood-hashes N]\n"
      "  [--unreported-expiry S] [--hoard N] [--stalled-subscriber S]\n",
      why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + flag).c_str());
    const std::string v = argv[++i];
    auto number = [&] {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end || d < 0) usage((flag + ": expected a number >= 0, got '" + v + "'").c_str());
      return d;
    };
    if (flag == "--seconds")
      o.seconds = number();
    else if (flag == "--subscribers")
      o.subscribers = static_cast<int>(number());
    else if (flag == "--silent")
      o.silent = static_cast<int>(number());
    else if (flag == "--churn")
      o.churn = static_cast<int>(number());
    else if (flag == "--speed")
      o.speed = number();
    else if (flag == "--scenario")
      o.scenario = v;
    else if (flag == "--idle")
      o.idle = static_cast<int>(number());
    else if (flag == "--trickle")
      o.trickle = static_cast<int>(number());
    else if (flag == "--scrape-ms")
      o.scrape_ms = std::max(10, static_cast<int>(number()));
    else if (flag == "--report-rate")
      o.report_rate = std::max(1.0, number());
    else if (flag == "--invalid-every")
      o.invalid_every = std::max(2, static_cast<int>(number()));
    else if (flag == "--interval")
      o.interval = number();
    else if (flag == "--connections")
      o.connections = std::max(1, static_cast<int>(number()));
    else if (flag == "--cli")
      o.cli = v;
    else if (flag == "--unreported-rate")
      o.unreported_rate = std::max(1.0, number());
    else if (flag == "--flood-hashes")
      o.flood_hashes = std::clamp(static_cast<int>(number()), 1, 65536);
    else if (flag == "--unreported-expiry")
      o.unreported_expiry = std::max(1.0, number());
    else if (flag == "--hoard")
      o.hoard = static_cast<int>(number());
    else if (flag == "--stalled-subscriber")
      o.stalled_subscriber = std::max(1.0, number());
    else
      usage(("unknown option " + flag).c_str());
  }
  if (o.seconds <= 0) usage("--seconds must be > 0");
  if (o.silent > o.subscribers) usage("--silent cannot exceed --subscribers");
  if (o.interval <= 0) o.interval = std::clamp(o.seconds / 10, 1.0, 30.0);
  if (o.cli.empty())  // beside this program: build/bin/
    o.cli = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "kvscope-cli").string();
  return o;
}

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q / 100 * static_cast<double>(v.size() - 1) + 0.5))];
}

std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The server's State (GetState): the run's time, and the streams it holds and has ended for not
// reading (the server's view: a client that never reads does not learn its stream was ended).
// sim_time_us is -1 when the call fails.
v1::State serverState(v1::Telemetry::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::State state;
  if (!stub.GetState(&ctx, {}, &state).ok()) state.set_sim_time_us(-1);
  return state;
}
std::int64_t simTime(v1::Telemetry::Stub& stub) { return serverState(stub).sim_time_us(); }

// A console connecting now: a fresh Subscribe gets its first event (RunStarted) within 5 s.
bool consoleGetsIn(v1::Telemetry::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::SubscribeRequest request;
  auto reader = stub.Subscribe(&ctx, request);
  v1::TelemetryMessage first;
  const bool got = reader->Read(&first);
  ctx.TryCancel();
  reader->Finish();
  return got;
}

std::string endedText(const std::map<std::string, long>& ended) {
  std::string out;
  for (const auto& [code, n] : ended) out += " " + code + " " + std::to_string(n);
  return out.empty() ? " none" : out;
}

double ownCpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  // The simulation must outlast the soak at this speed (30 days at most, the CLI's bound).
  const double duration = std::min(2.6e6, std::max(3600.0, o.speed * o.seconds * 1.5 + 3600));
  std::printf(
      "bench_soak: %.0f s; serve --scenario %s --speed %g --duration %.0f; %d subscribers (%d never read, "
      "ended after %.0f s stalled; %d/s churn) over %d+ connections; /metrics every %d ms with %d idle and %d "
      "trickling sockets; serve --router: Report at %.0f/s, 1 in %d invalid; %.0f unreported Routes/s of %d "
      "hashes (expiry %.0f s); %d never-read WatchKnobs; SetKnobs every second\n",
      o.seconds, o.scenario.c_str(), o.speed, duration, o.subscribers, o.silent, o.stalled_subscriber, o.churn,
      o.connections, o.scrape_ms, o.idle, o.trickle, o.report_rate, o.invalid_every, o.unreported_rate, o.flood_hashes,
      o.unreported_expiry, o.hoard);
  std::fflush(stdout);

  std::unique_ptr<ServeProcess> sim, router;
  try {
    sim = std::make_unique<ServeProcess>(
        o.cli, std::vector<std::string>{"--scenario", o.scenario, "--speed", fixed(o.speed, 3), "--duration",
                                        fixed(duration, 0), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
                                        "--max-subscribers", std::to_string(o.subscribers + 64),
                                        // every subscriber comes from this host, and one probe more
                                        "--max-subscribers-per-host", std::to_string(o.subscribers + 64),
                                        "--stalled-subscriber", fixed(o.stalled_subscriber, 0)});
    router = std::make_unique<ServeProcess>(
        o.cli, std::vector<std::string>{"--router", "D0,D1,D2", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
                                        "--set", "unreported_expiry_s=" + fixed(o.unreported_expiry, 0)});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_soak: %s\n", e.what());
    return 1;
  }
  std::printf("simulation on %s (metrics %s, pid %d); router on %s (metrics %s, pid %d)\n", sim->grpcAddress().c_str(),
              sim->metricsAddress().c_str(), sim->pid(), router->grpcAddress().c_str(),
              router->metricsAddress().c_str(), router->pid());

  auto telemetry = v1::Telemetry::NewStub(grpc::CreateChannel(sim->grpcAddress(), grpc::InsecureChannelCredentials()));
  const long rss_start_sim = sim->rssKiB(), rss_start_router = router->rssKiB();
  {
    SubscriberPool subscribers(sim->grpcAddress(), o.subscribers, o.silent, o.connections);
    MetricsProbe sim_metrics(sim->metricsAddress(), o.scrape_ms, o.idle, o.trickle);
    MetricsProbe router_metrics(router->metricsAddress(), o.scrape_ms, 0, 0);
    ReportFeeder reports(router->grpcAddress(), o.report_rate, o.invalid_every);
    RouteFlood flood(router->grpcAddress(), o.unreported_rate, o.flood_hashes);
    SubscriberPool hoard(router->grpcAddress(), o.hoard, o.hoard, 2, SubscriberPool::kWatchKnobs);
    long console_in = 0, console_refused = 0;
    std::size_t last_routes = 0, last_set_knobs = 0;

    std::printf("\n%7s %9s %10s %11s %9s %8s %9s %9s %9s %9s %8s %8s %9s %7s %7s %8s %8s %9s %9s %8s %7s %8s\n", "t(s)",
                "pace(x)", "sim(s)", "subs conn", "silent", "msgs/s", "gaps", "rss sim", "rss rtr", "cpu sim",
                "scr p50", "scr p99", "report ok", "rej", "hostile", "routes/s", "rt p99", "setk p99", "expired",
                "watch", "console", "stalled");
    std::printf("%7s %9s %10s %11s %9s %8s %9s %9s %9s %9s %8s %8s %9s %7s %7s %8s %8s %9s %9s %8s %7s %8s\n", "", "",
                "", "/target", "conn", "", "", "MiB", "MiB", "%", "ms", "ms", "", "", "closed", "unrep", "ms", "ms",
                "unrep", "hoarded", "in", "ended");
    const auto start = Clock::now();
    auto last = start;
    std::int64_t last_sim = simTime(*telemetry), first_sim = last_sim;
    std::uint64_t last_messages = 0;
    double last_cpu = sim->cpuSeconds();
    std::size_t last_scrapes = 0;
    std::vector<double> paces;
    long rss_peak_sim = rss_start_sim, rss_peak_router = rss_start_router, min_connected = -1;
    auto next_row = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.interval));
    auto next_tick = start;
    bool died = false;
    while (Clock::now() - start < std::chrono::duration<double>(o.seconds)) {
      next_tick += std::chrono::seconds(1);
      std::this_thread::sleep_until(next_tick);
      subscribers.maintain(Clock::now() - start > std::chrono::seconds(5) ? o.churn : 0);  // churn once all are up
      hoard.maintain(0);  // refused ones are tried again, as a hoarder would
      rss_peak_sim = std::max(rss_peak_sim, sim->rssKiB());
      rss_peak_router = std::max(rss_peak_router, router->rssKiB());
      if (sim->rssKiB() < 0 || router->rssKiB() < 0) {
        died = true;
        break;
      }
      if (Clock::now() < next_row) continue;
      next_row += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.interval));
      const auto now = Clock::now();
      const double wall = std::chrono::duration<double>(now - last).count();
      const v1::State state = serverState(*telemetry);
      const std::int64_t sim_now = state.sim_time_us();
      const double pace = sim_now >= 0 && last_sim >= 0 ? static_cast<double>(sim_now - last_sim) / 1e6 / wall : 0;
      paces.push_back(pace);
      const auto subs = subscribers.counts();
      min_connected = min_connected < 0 ? subs.connected : std::min(min_connected, subs.connected);
      const auto scrapes = sim_metrics.counts();
      const std::vector<double> recent(scrapes.scrape_ms.begin() + static_cast<long>(last_scrapes),
                                       scrapes.scrape_ms.end());
      const double cpu = sim->cpuSeconds();
      const auto rep = reports.counts();
      const auto fl = flood.counts();
      const std::vector<double> recent_routes(fl.route_ms.begin() + static_cast<long>(last_routes), fl.route_ms.end());
      const std::vector<double> recent_knobs(fl.set_knobs_ms.begin() + static_cast<long>(last_set_knobs),
                                             fl.set_knobs_ms.end());
      const bool in = consoleGetsIn(*telemetry);
      (in ? console_in : console_refused) += 1;
      const double expired = MetricsProbe::sumOf(router_metrics.counts().last_body, "kvscope_expired_unreported_total");
      std::printf(
          "%7.0f %9.0f %10.0f %5ld/%-5d %9ld %8.0f %9llu %9.1f %9.1f %9.0f %8.1f %8.1f %9llu %7llu %7ld %8.0f %8.1f "
          "%9.1f %9.0f %8ld %7s %8llu\n",
          std::chrono::duration<double>(now - start).count(), pace, static_cast<double>(sim_now) / 1e6, subs.connected,
          o.subscribers, subs.connected_silent, static_cast<double>(subs.messages - last_messages) / wall,
          static_cast<unsigned long long>(subs.gaps), static_cast<double>(sim->rssKiB()) / 1024,
          static_cast<double>(router->rssKiB()) / 1024, (cpu - last_cpu) / wall * 100, pct(recent, 50), pct(recent, 99),
          static_cast<unsigned long long>(rep.applied), static_cast<unsigned long long>(rep.rejected),
          scrapes.hostile_closed, static_cast<double>(recent_routes.size()) / wall, pct(recent_routes, 99),
          pct(recent_knobs, 99), expired, hoard.counts().connected, in ? "yes" : "NO",
          static_cast<unsigned long long>(state.stalled_streams_ended()));
      last_routes = fl.route_ms.size();
      last_set_knobs = fl.set_knobs_ms.size();
      std::fflush(stdout);
      last = now;
      last_sim = sim_now;
      last_messages = subs.messages;
      last_cpu = cpu;
      last_scrapes = scrapes.scrape_ms.size();
    }
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    const v1::State end_state = serverState(*telemetry);
    const std::int64_t sim_end = end_state.sim_time_us();
    const auto subs = subscribers.counts();
    const auto scrapes = sim_metrics.counts();
    const auto router_scrapes = router_metrics.counts();
    const auto rep = reports.counts();

    std::printf("\nsummary after %.0f s%s\n", wall, died ? " (a server died: see its last lines below)" : "");
    std::printf("pace: %.0fx overall (asked %gx); per interval min %.0fx, median %.0fx\n",
                static_cast<double>(sim_end - first_sim) / 1e6 / wall, o.speed,
                paces.empty() ? 0 : *std::min_element(paces.begin(), paces.end()), pct(paces, 50));
    std::printf(
        "subscribers: %ld of %d connected at the end (%ld of them silent), fewest at a report %ld; %ld pending; "
        "%ld streams opened, %ld churned; %llu messages (%.1f MiB), %llu gaps\n",
        subs.connected, o.subscribers, subs.connected_silent, min_connected, subs.pending, subs.opened, subs.churned,
        static_cast<unsigned long long>(subs.messages), static_cast<double>(subs.bytes) / 1048576,
        static_cast<unsigned long long>(subs.gaps));
    std::printf(
        "  ended by the server, as the clients saw it:%s; the server's count: %u streams open, %llu ended for "
        "not reading (--stalled-subscriber %.0f s; a client that never reads never hears of it)\n",
        endedText(subs.ended).c_str(), end_state.subscribers(),
        static_cast<unsigned long long>(end_state.stalled_streams_ended()), o.stalled_subscriber);
    std::printf(
        "RSS simulation serve: start %.1f MiB, peak %.1f MiB, end %.1f MiB; router serve: start %.1f, peak %.1f, end "
        "%.1f MiB\n",
        static_cast<double>(rss_start_sim) / 1024, static_cast<double>(rss_peak_sim) / 1024,
        static_cast<double>(sim->rssKiB()) / 1024, static_cast<double>(rss_start_router) / 1024,
        static_cast<double>(rss_peak_router) / 1024, static_cast<double>(router->rssKiB()) / 1024);
    std::printf("CPU: simulation serve %.0f s, router serve %.0f s, this client %.0f s (of %.0f s wall)\n",
                sim->cpuSeconds(), router->cpuSeconds(), ownCpuSeconds(), wall);
    std::printf(
        "/metrics (simulation): %zu scrapes, p50 %.1f ms, p99 %.1f ms, max %.1f ms, %ld failed; "
        "%ld idle and %ld trickling sockets open at the end, %ld closed by the server\n",
        scrapes.scrape_ms.size(), pct(scrapes.scrape_ms, 50), pct(scrapes.scrape_ms, 99),
        scrapes.scrape_ms.empty() ? 0 : *std::max_element(scrapes.scrape_ms.begin(), scrapes.scrape_ms.end()),
        scrapes.scrape_failures, scrapes.idle_open, scrapes.trickle_open, scrapes.hostile_closed);
    std::printf("/metrics (router): %zu scrapes, p50 %.1f ms, p99 %.1f ms, %ld failed\n",
                router_scrapes.scrape_ms.size(), pct(router_scrapes.scrape_ms, 50), pct(router_scrapes.scrape_ms, 99),
                router_scrapes.scrape_failures);
    std::printf("Report: %llu streams, %llu observations applied, %llu rejected with INVALID_ARGUMENT",
                static_cast<unsigned long long>(rep.streams), static_cast<unsigned long long>(rep.applied),
                static_cast<unsigned long long>(rep.rejected));
    std::uint64_t unexpected = 0;
    for (const auto& [what, n] : rep.unexpected) unexpected += n;
    std::printf(", %llu other outcomes\n", static_cast<unsigned long long>(unexpected));
    for (const auto& [what, n] : rep.unexpected)
      std::printf("  %llu x %s\n", static_cast<unsigned long long>(n), what.c_str());
    const auto fl = flood.counts();
    const auto hoarded = hoard.counts();
    std::printf(
        "unreported routes: %llu routed (%.0f/s of %.0f/s asked), latency p50 %.2f ms, p99 %.2f ms, max %.1f ms; "
        "%.0f expired by the router; router RSS above\n",
        static_cast<unsigned long long>(fl.routed), static_cast<double>(fl.routed) / wall, o.unreported_rate,
        pct(fl.route_ms, 50), pct(fl.route_ms, 99),
        fl.route_ms.empty() ? 0 : *std::max_element(fl.route_ms.begin(), fl.route_ms.end()),
        MetricsProbe::sumOf(router_metrics.counts().last_body, "kvscope_expired_unreported_total"));
    std::printf("SetKnobs under %d hoarded WatchKnobs: %llu applied, p50 %.2f ms, p99 %.2f ms, max %.1f ms\n", o.hoard,
                static_cast<unsigned long long>(fl.knob_changes), pct(fl.set_knobs_ms, 50), pct(fl.set_knobs_ms, 99),
                fl.set_knobs_ms.empty() ? 0 : *std::max_element(fl.set_knobs_ms.begin(), fl.set_knobs_ms.end()));
    for (const auto& [what, n] : fl.failed)
      std::printf("  %llu x %s\n", static_cast<unsigned long long>(n), what.c_str());
    std::printf("hoarded WatchKnobs: %ld of %d held at the end, %ld opened in all; ended by the router:%s\n",
                hoarded.connected, o.hoard, hoarded.opened, endedText(hoarded.ended).c_str());
    std::printf("console probes (a fresh Subscribe each interval): %ld got in, %ld refused or silent\n", console_in,
                console_refused);
    std::printf("server log: simulation %ld warnings, %ld errors; router %ld warnings, %ld errors\n",
                sim->logLines("warning"), sim->logLines("error"), router->logLines("warning"),
                router->logLines("error"));
    if (died)
      for (const auto* p : {sim.get(), router.get()})
        for (const auto& line : p->lastLines()) std::printf("  | %s\n", line.c_str());
    std::fflush(stdout);
    if (died) return 1;
  }
  const int sim_status = sim->stop(), router_status = router->stop();
  std::printf("serve exit status: simulation %d, router %d\n", sim_status, router_status);
  return sim_status == 0 && router_status == 0 ? 0 : 1;
}
