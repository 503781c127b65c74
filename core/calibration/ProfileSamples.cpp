#include "core/calibration/ProfileSamples.h"
#include "core/io/InputFile.h"

#include <fstream>

#include "core/live/ExpositionParser.h"
#include "core/live/SavedScrapeReader.h"
#include "core/live/SglangMetricsMapper.h"
#include "core/model/Error.h"

namespace kvscope {

const char* toString(PrefillMethod m) {
  switch (m) {
    case PrefillMethod::None:
      return "none";
    case PrefillMethod::InputThroughput:
      return "input_throughput";
    case PrefillMethod::LineGapsMs:
      return "line_gaps_ms";
    case PrefillMethod::LineGapsSeconds:
      return "line_gaps_seconds";
  }
  return "none";
}

namespace {

std::string streamKey(const std::string& file, const LogPrefix& p) {
  return file + "|" + std::to_string(p.dp) + "," + std::to_string(p.tp) + "," + std::to_string(p.pp) + "," +
         std::to_string(p.ep) + "," + std::to_string(p.cp) + "," + std::to_string(p.attn_cp) + "," +
         std::to_string(p.moe_dp) + "," + std::to_string(p.gpu);
}

}  // namespace

void ProfileSamples::addLogFile(const std::string& path) {
  std::ifstream in = InputFile::open(path);
  std::string line;
  bool too_long = false;
  while (InputFile::readLine(in, line, &too_long, path)) {
    if (too_long) continue;  // no sample line is a megabyte long: not one of ours
    addLine(line, path);
  }
}

void ProfileSamples::addLine(std::string_view line, const std::string& file) {
  ++lines_;
  if (line.find(" batch") == std::string_view::npos) return;  // cheap skip of every other line
  const LogRecord r = SchedulerLogParser::parse(line);
  const BatchGauges& b = r.batch;
  if (r.kind == LogLineKind::DecodeBatch) {
    ++decode_counts_.lines;
    if (b.running_req <= 0) {
      ++decode_counts_.no_running;
    } else if (!(b.gen_throughput > 0)) {
      ++decode_counts_.no_throughput;
    } else if (b.accept_len >= 0) {
      ++decode_counts_.speculative;
    } else if (b.tokens < 0) {
      ++decode_counts_.no_tokens;
    } else {
      ++decode_counts_.used;
      const auto running = static_cast<double>(b.running_req);
      decode_.push_back({running, static_cast<double>(b.tokens), running / b.gen_throughput});
    }
  } else if (r.kind == LogLineKind::PrefillBatch) {
    PrefillLine p;
    if (r.prefix.has_time) {
      p.time_ms = r.prefix.clock_s * 1000 + (r.prefix.millis >= 0 ? r.prefix.millis : 0);
      p.has_ms = r.prefix.millis >= 0;
    }
    p.new_token = static_cast<double>(b.new_token);
    p.queue_req = static_cast<double>(b.queue_req);
    p.input_throughput = b.input_throughput;
    prefill_lines_[streamKey(file, r.prefix)].push_back(p);
  }
}

std::vector<PrefillSample> ProfileSamples::prefill(PrefillMethod& method, PrefillCounts& counts) const {
  counts = {};
  bool any_throughput = false, all_ms = true, all_timed = true;
  for (const auto& [key, lines] : prefill_lines_)
    for (const auto& l : lines) {
      ++counts.lines;
      if (l.input_throughput >= 0) {
        ++counts.with_throughput;
        any_throughput = true;
      }
      all_ms = all_ms && l.has_ms;
      all_timed = all_timed && l.time_ms >= 0;
    }
  std::vector<PrefillSample> out;
  method = PrefillMethod::None;
  if (counts.lines == 0) return out;
  method = any_throughput ? PrefillMethod::InputThroughput
           : all_ms       ? PrefillMethod::LineGapsMs
           : all_timed    ? PrefillMethod::LineGapsSeconds
                          : PrefillMethod::None;
  if (method == PrefillMethod::None) return out;
  for (const auto& [key, lines] : prefill_lines_) {
    PrefillSample window;  // LineGapsSeconds: consecutive saturated gaps
    std::int64_t window_start = -1;
    for (std::size_t k = 1; k < lines.size(); ++k) {
      const PrefillLine& prev = lines[k - 1];
      const PrefillLine& cur = lines[k];
      double gap = -1;
      if (method == PrefillMethod::InputThroughput) {
        if (cur.input_throughput > 0 && prev.new_token > 0) gap = prev.new_token / cur.input_throughput;
      } else if (prev.new_token > 0 && cur.time_ms >= prev.time_ms) {
        gap = static_cast<double>(cur.time_ms - prev.time_ms) / 1000.0;
        if (method == PrefillMethod::LineGapsMs && gap <= 0) gap = -1;
      }
      if (gap < 0) {
        ++counts.no_gap;
        window_start = -1;
        continue;
      }
      ++counts.pairs;
      const bool saturated = prev.queue_req > 0;
      counts.saturated_pairs += saturated;
      if (method != PrefillMethod::LineGapsSeconds) {
        out.push_back({1, prev.new_token, gap, saturated});
        continue;
      }
      // Whole seconds: a single gap is 0 or 1 s; add consecutive saturated gaps until they span
      // kSecondsWindow, so each window's time is off by at most 1 s in kSecondsWindow.
      if (!saturated) {
        window_start = -1;
        continue;
      }
      if (window_start < 0) {
        window_start = prev.time_ms;
        window = {0, 0, 0, true};
      }
      window.batches += 1;
      window.tokens += prev.new_token;
      const double span = static_cast<double>(cur.time_ms - window_start) / 1000.0;
      if (span >= kSecondsWindow) {
        window.seconds = span;
        out.push_back(window);
        window_start = -1;
      }
    }
  }
  return out;
}

void ProfileSamples::addScrapeFile(const std::string& worker, const std::string& path) {
  SavedScrapeReader reader(path);
  while (auto scrape = reader.next()) addScrape(worker, scrape->body);
}

void ProfileSamples::addScrape(const std::string& worker, std::string_view body) {
  ++transfer_.scrapes;
  const EngineMetrics m = SglangMetricsMapper::map(ExpositionParser().parse(body));
  bool has = false;
  if (m.kv_transfer_speed_hist) {
    has = true;
    HistState& h = hist_[worker];
    const double sum = m.kv_transfer_speed_hist->sum, count = m.kv_transfer_speed_hist->count;
    if (h.seen) {
      // A counter that went down is a restarted worker: what it holds now is all new.
      const bool reset = count < h.count || sum < h.sum;
      transfer_.hist_count += reset ? count : count - h.count;
      transfer_.hist_sum_gb_s += reset ? sum : sum - h.sum;
    }
    h = {sum, count, true};
  } else if (m.kv_transfer_speed_gb_s) {
    has = true;
    // A gauge holds the last transfer's speed: a new value is a new transfer (a repeat may be one
    // too, but cannot be told from the same transfer read again, so it is not counted).
    const double v = *m.kv_transfer_speed_gb_s;
    auto it = last_gauge_.find(worker);
    if (v > 0 && (it == last_gauge_.end() || it->second != v)) transfer_.gauge_gb_s.push_back(v);
    last_gauge_[worker] = v;
  }
  transfer_.scrapes_with_transfer_metrics += has;
}

}  // namespace kvscope
