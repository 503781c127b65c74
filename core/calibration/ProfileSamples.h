#pragma once
// The samples a hardware-profile fit reads, taken from what the workers printed:
// SGLang's `Decode batch` / `Prefill batch` scheduler lines (parsed by SchedulerLogParser) and saved
// /metrics scrapes (SavedScrapeReader + SglangMetricsMapper). Its own class so that what each line
// means (upstream's scheduler_metrics_mixin.py) is decided in one place, apart from the fitting, and
// every line that cannot give a sample is counted with its reason.
//
// Decode: a line's `gen throughput (token/s)` is the tokens generated since the previous decode log
// over the time since it (decode_log_interval iterations); one iteration makes one token per running
// request, so iteration time ~ #running-req / gen throughput.
// Prefill: `input throughput (token/s)` (printed by prefill workers of disaggregation, and by some
// versions on every prefill line) is the PREVIOUS prefill batch's #new-token over the time between
// the previous prefill log and this one; so gap = previous #new-token / this line's throughput.
// Lines without it: the gap is the difference of the two lines' times. A gap is a batch's time only
// when the scheduler went straight on to the next batch: the previous line still had #queue-req > 0
// ("saturated").
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/live/SchedulerLogParser.h"

namespace kvscope {

struct DecodeSample {
  double running = 0;      // #running-req
  double tokens = 0;       // #token (KV tokens in use)
  double iteration_s = 0;  // #running-req / gen throughput
};

// One prefill gap (batches = 1) or a window of consecutive gaps (whole-second timestamps).
struct PrefillSample {
  double batches = 1;
  double tokens = 0;   // #new-token of the batches the time covers
  double seconds = 0;  // the time they took
  bool saturated = false;
};

enum class PrefillMethod : std::uint8_t { None, InputThroughput, LineGapsMs, LineGapsSeconds };
const char* toString(PrefillMethod);

struct DecodeCounts {
  long lines = 0;  // Decode batch lines seen
  long used = 0;
  long no_running = 0;     // #running-req 0 (or absent)
  long no_throughput = 0;  // gen throughput 0 (or absent)
  long no_tokens = 0;      // no #token / #full token
  long speculative = 0;    // accept len printed: tokens per iteration unknown
};

struct PrefillCounts {
  long lines = 0;            // Prefill batch lines seen
  long with_throughput = 0;  // that printed input throughput
  long pairs = 0;            // consecutive prefill lines of one scheduler that gave a gap
  long saturated_pairs = 0;  // of which the previous line had #queue-req > 0
  long no_gap = 0;           // pairs that gave no time (throughput 0, no new tokens, no time on the line)
};

// Transfer speed seen in saved scrapes (SGLang's kv_transfer_speed_gb_s, GB/s per transfer).
struct TransferSamples {
  std::vector<double> gauge_gb_s;  // gauge (older SGLang): one value per change
  double hist_sum_gb_s = 0;        // histogram (newer): the growth of _sum and _count over the scrapes
  double hist_count = 0;
  long scrapes = 0;
  long scrapes_with_transfer_metrics = 0;
};

class ProfileSamples {
 public:
  // Reads a scheduler log whole; throws InputError when it cannot be opened.
  void addLogFile(const std::string& path);
  // One line of `file` (the stream key: one scheduler per file and rank prefix).
  void addLine(std::string_view line, const std::string& file);
  // Reads a saved-scrape file (SavedScrapeReader's format) of worker `worker`; throws InputError.
  void addScrapeFile(const std::string& worker, const std::string& path);
  // Adds one scrape body (exposition text) of a worker, in time order.
  void addScrape(const std::string& worker, std::string_view body);

  const std::vector<DecodeSample>& decode() const { return decode_; }
  const DecodeCounts& decodeCounts() const { return decode_counts_; }
  // The prefill samples of the best method the lines allow (InputThroughput, then LineGapsMs, then
  // LineGapsSeconds); `method` says which, `counts` what the lines gave.
  std::vector<PrefillSample> prefill(PrefillMethod& method, PrefillCounts& counts) const;
  const TransferSamples& transfer() const { return transfer_; }
  long lines() const { return lines_; }

  // Whole-second timestamps: a window of gaps is closed once it spans this many seconds.
  static constexpr double kSecondsWindow = 10;

 private:
  struct PrefillLine {
    std::int64_t time_ms = -1;  // -1: the line has no time
    bool has_ms = false;
    double new_token = -1, queue_req = -1, input_throughput = -1;
  };
  struct HistState {
    double sum = 0, count = 0;
    bool seen = false;
  };
  std::vector<DecodeSample> decode_;
  DecodeCounts decode_counts_;
  std::map<std::string, std::vector<PrefillLine>> prefill_lines_;  // by stream
  TransferSamples transfer_;
  std::map<std::string, HistState> hist_;     // by worker
  std::map<std::string, double> last_gauge_;  // by worker
  long lines_ = 0;
};

}  // namespace kvscope
