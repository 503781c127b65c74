#include "core/live/SchedulerLogPrefix.h"

#include <algorithm>

#include "core/live/LogFieldReader.h"
#include "core/model/CivilDate.h"

namespace kvscope {

using namespace logtext;

namespace {

// One rank tag: capitals with inner underscores, then digits ("TP0", "ATTN_CP1", "MOE_DP2").
bool rankTag(std::string_view line, std::size_t& i, LogPrefix& out) {
  std::size_t k = i;
  while (k < line.size() && ((line[k] >= 'A' && line[k] <= 'Z') || (line[k] == '_' && k > i))) ++k;
  const std::string_view tag = line.substr(i, k - i);
  std::size_t n = k;
  while (n < line.size() && isDigit(line[n])) ++n;
  const auto rank = toInt(line.substr(k, n - k));
  if (tag.empty() || tag.back() == '_' || !rank || *rank > 1'000'000) return false;
  const int v = static_cast<int>(*rank);
  if (tag == "TP")
    out.tp = v;
  else if (tag == "DP")
    out.dp = v;
  else if (tag == "PP")
    out.pp = v;
  else if (tag == "EP")
    out.ep = v;
  else if (tag == "CP")
    out.cp = v;
  else if (tag == "ATTN_CP")
    out.attn_cp = v;
  else if (tag == "MOE_DP")
    out.moe_dp = v;
  i = n;
  return true;
}

}  // namespace

bool SchedulerLogPrefix::parse(std::string_view line, LogPrefix& p, std::string_view& rest) {
  // "[YYYY-MM-DD HH:MM:SS" = 20 characters, then optional ".mmm" (or ",mmm"), rank tags, "] ".
  // Without asctime: "[TP0] ", "[DP1 TP3] " (rank tags only, at least one).
  if (line.size() < 4 || line[0] != '[') return false;
  LogPrefix out;
  std::size_t i = 1;
  std::int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (isDigit(line[1])) {
    if (line.size() < 22) return false;
    const std::string_view d = line.substr(1, 19);
    static constexpr char kShape[] = "dddd-dd-dd dd:dd:dd";
    for (std::size_t k = 0; k < 19; ++k)
      if (kShape[k] == 'd' ? !isDigit(d[k]) : d[k] != kShape[k]) return false;
    const auto num = [&](std::size_t at, std::size_t n) { return *toInt(d.substr(at, n)); };
    year = num(0, 4), month = num(5, 2), day = num(8, 2), hour = num(11, 2), minute = num(14, 2), second = num(17, 2);
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
    i = 20;
    if (i < line.size() && (line[i] == ',' || line[i] == '.')) {
      const std::size_t from = ++i;
      while (i < line.size() && isDigit(line[i])) ++i;
      if (const auto ms = toInt(line.substr(from, std::min<std::size_t>(i - from, 3))))
        out.millis = static_cast<int>(*ms);
    }
    out.has_time = true;
    out.timestamp = std::string(d);
    while (i < line.size() && line[i] == ' ') {
      ++i;
      if (!rankTag(line, i, out)) return false;
    }
  } else if (line.starts_with("[gpu_id=")) {
    // 2024 tp_worker.py wrote its own "[gpu_id=N] " in front of the message, with no asctime.
    i = 8;
    const std::size_t from = i;
    while (i < line.size() && isDigit(line[i])) ++i;
    const auto gpu = toInt(line.substr(from, i - from));
    if (!gpu || *gpu > 1'000'000) return false;
    out.gpu = static_cast<int>(*gpu);
  } else {
    if (!rankTag(line, i, out)) return false;
    while (i < line.size() && line[i] == ' ') {
      ++i;
      if (!rankTag(line, i, out)) return false;
    }
  }
  if (i >= line.size() || line[i] != ']') return false;
  ++i;
  if (i < line.size() && line[i] == ' ') ++i;
  out.present = true;
  if (out.has_time)
    out.clock_s = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
                  minute * 60 + second;
  p = std::move(out);
  rest = line.substr(i);
  return true;
}

}  // namespace kvscope
