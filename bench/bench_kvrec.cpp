// Recordings: write and read events per second with ~60-byte payloads, bytes per event on disk, and
// open + seek on a one-million-event recording with a keyframe every 1,000 events, both from the
// index written at close and from a recording that lost it (open rebuilds the index by a scan).
//
// Benchmarks link kvscope_core only, so the container's two sources are compiled in here; xxhash is
// used header-only (XXH_INLINE_ALL in KvrecFormat.h), so nothing else needs linking.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backend/recording/KvrecReader.h"
#include "backend/recording/KvrecWriter.h"

using namespace kvscope;

namespace {

constexpr int kEvents = 1'000'000;
constexpr int kKeyframeEvery = 1'000;
constexpr std::int64_t kEventSpacingUs = 250;  // 4,000 events per simulated second

// 56..64 bytes of protobuf-like content, different per event, made once so writing measures the writer.
const std::vector<std::string>& payloads() {
  static const std::vector<std::string> p = [] {
    std::mt19937_64 rng(42);
    std::vector<std::string> out(4096);
    for (auto& s : out) {
      s.resize(56 + rng() % 9);
      for (auto& c : s) c = static_cast<char>(rng() % 96 + (rng() % 4 == 0 ? 0 : 32));
    }
    return out;
  }();
  return p;
}

std::string tempPath(const char* name) {
  return (std::filesystem::temp_directory_path() / ("kvscope_bench_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

struct TempFile {
  std::string path;
  ~TempFile() { std::remove(path.c_str()); }
};

bool writeMillion(const std::string& path) {
  std::string error;
  auto w = KvrecWriter::create(path, "bench run metadata", &error);
  if (!w) return false;
  const auto& p = payloads();
  for (int i = 0; i < kEvents; ++i)
    w->append(static_cast<std::uint64_t>(i), i * kEventSpacingUs, i % kKeyframeEvery == 0, p[i & 4095]);
  return w->close(&error);
}

// The one-million-event recording, closed properly, and a copy without its index frame and trailer.
const std::string& million(bool with_index) {
  static TempFile closed{tempPath("closed.kvrec")};
  static TempFile crashed{tempPath("crashed.kvrec")};
  static const bool ready = [] {
    if (!writeMillion(closed.path)) return false;
    std::string error;
    auto r = KvrecReader::open(closed.path, &error);
    if (!r || r->keyframes().empty()) return false;
    // Cutting at the index frame gives what a kill -9 just before close leaves.
    KvrecFrame f;
    std::uint64_t end = 0;
    while (r->next(f)) end = f.offset + kKvrecFrameHeaderSize + f.payload.size();
    std::filesystem::copy_file(closed.path, crashed.path, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(crashed.path, end);
    return true;
  }();
  if (!ready) std::abort();
  return with_index ? closed.path : crashed.path;
}

}  // namespace

static void BM_KvrecWrite(benchmark::State& state) {
  const TempFile file{tempPath("write.kvrec")};
  const auto& p = payloads();
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    std::string error;
    auto w = KvrecWriter::create(file.path, "bench run metadata", &error);
    for (int i = 0; i < kEvents; ++i)
      w->append(static_cast<std::uint64_t>(i), i * kEventSpacingUs, i % kKeyframeEvery == 0, p[i & 4095]);
    w->close(&error);
    bytes = w->bytes();
  }
  double payload_bytes = 0;
  for (int i = 0; i < kEvents; ++i) payload_bytes += static_cast<double>(p[i & 4095].size());
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kEvents, benchmark::Counter::kIsRate);
  state.counters["bytes/event"] = static_cast<double>(bytes) / kEvents;
  state.counters["payload_bytes/event"] = payload_bytes / kEvents;
}
BENCHMARK(BM_KvrecWrite)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// Open and read every event, checksums verified (the file is in the page cache).
static void BM_KvrecRead(benchmark::State& state) {
  const std::string& path = million(true);
  std::uint64_t events = 0, bytes = 0;
  for (auto _ : state) {
    std::string error;
    auto r = KvrecReader::open(path, &error);
    KvrecFrame f;
    while (r->next(f)) {
      ++events;
      bytes += f.payload.size();
    }
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["file_bytes/event"] = static_cast<double>(std::filesystem::file_size(path)) / kEvents;
}
BENCHMARK(BM_KvrecRead)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// Open, jump to a random time, read the keyframe there and the events up to that time.
static void BM_KvrecOpenAndSeek(benchmark::State& state) {
  const bool with_index = state.range(0) != 0;
  const std::string& path = million(with_index);
  std::mt19937_64 rng(7);
  std::uint64_t replayed = 0;
  for (auto _ : state) {
    std::string error;
    auto r = KvrecReader::open(path, &error);
    const std::int64_t target = static_cast<std::int64_t>(rng() % kEvents) * kEventSpacingUs;
    r->seek(target);
    KvrecFrame f;
    while (r->next(f) && f.time_us < target) ++replayed;
    benchmark::DoNotOptimize(f.seq);
    if (r->stats().index_rebuilt == with_index) state.SkipWithError("index state not as expected");
  }
  state.counters["events_replayed_from_keyframe"] =
      static_cast<double>(replayed) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_KvrecOpenAndSeek)->ArgName("with_index")->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Seek alone on an open reader: the index lookup and the first frame (the keyframe) read.
static void BM_KvrecSeek(benchmark::State& state) {
  std::string error;
  auto r = KvrecReader::open(million(true), &error);
  std::mt19937_64 rng(11);
  KvrecFrame f;
  for (auto _ : state) {
    r->seek(static_cast<std::int64_t>(rng() % kEvents) * kEventSpacingUs);
    r->next(f);
    benchmark::DoNotOptimize(f.seq);
  }
  state.counters["seeks/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_KvrecSeek)->Unit(benchmark::kNanosecond);

BENCHMARK_MAIN();
