#include "core/live/ExpositionParser.h"

#include "core/model/Error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace kvscope {

const char* toString(MetricType t) {
  switch (t) {
    case MetricType::Untyped:
      return "untyped";
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
    case MetricType::Summary:
      return "summary";
  }
  return "?";
}

const std::string* MetricSample::label(std::string_view name) const {
  for (const auto& l : labels)
    if (l.name == name) return &l.value;
  return nullptr;
}

std::string ExpositionProblem::message() const {
  std::string out = line > 0 ? "line " + std::to_string(line) + ": " : std::string();
  if (!field.empty()) out += "field '" + field + "': ";
  return out + what;
}

const MetricFamily* Exposition::find(std::string_view name) const {
  for (const auto& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }
bool isLabelStart(char c) { return isNameStart(c) && c != ':'; }
bool isLabelChar(char c) { return isNameChar(c) && c != ':'; }
bool isBlank(char c) { return c == ' ' || c == '\t'; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

// Prometheus (Go's ParseFloat) values: decimal or exponent floats, [+-]Inf and NaN in any case.
std::optional<double> parseValue(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string_view body = s;
  const bool negative = body.front() == '-';
  if (body.front() == '+' || body.front() == '-') body.remove_prefix(1);
  if (iequals(body, "inf") || iequals(body, "infinity"))
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (iequals(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body.front())) || body.front() == '.'))
    return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v, std::chars_format::general);
  // Out of range (1e999) is a wrong number, not infinity: the exporter would have written +Inf.
  if (ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
  return negative ? -v : v;
}

std::optional<std::int64_t> parseTimestamp(std::string_view s) {
  std::int64_t v = 0;
  const char* first = s.data();
  if (!s.empty() && s.front() == '+') ++first;
  const auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The key of a series within its family: its labels without `le`/`quantile`, sorted.
std::string seriesKey(const MetricSample& s, std::string_view skip) {
  std::vector<const MetricLabel*> ls;
  for (const auto& l : s.labels)
    if (l.name != skip) ls.push_back(&l);
  std::sort(ls.begin(), ls.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::string key;
  for (const auto* l : ls) key += l->name + '\x1f' + l->value + '\x1e';
  return key;
}

std::string formatLe(double le) {
  if (std::isinf(le)) return le > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, le);
  return ec == std::errc() ? std::string(buf, end) : "?";
}

class Run {
 public:
  Run(const ExpositionLimits& limits, Exposition& out) : limits_(limits), out_(out) {}

  void problem(long line, std::string field, std::string what) {
    if (out_.problems.size() >= limits_.max_problems) {
      ++out_.problems_dropped;
      return;
    }
    out_.problems.push_back({line, std::move(field), std::move(what)});
  }

  void line(long no, std::string_view text) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);  // tolerated, never required
    if (text.size() > limits_.max_line_bytes) {
      problem(no, "",
              "expected a line of at most " + std::to_string(limits_.max_line_bytes) + " bytes, got " +
                  std::to_string(text.size()));
      return;
    }
    for (char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) {
        problem(no, "", "expected text, got binary data (byte " + std::to_string(u) + ")");
        return;
      }
    }
    std::size_t i = 0;
    while (i < text.size() && isBlank(text[i])) ++i;
    if (i == text.size()) return;
    if (text[i] == '#') return comment(no, text.substr(i + 1));
    sample(no, text.substr(i));
  }

  void finish(bool ends_mid_line) { checkHistograms(ends_mid_line); }

 private:
  std::size_t familyFor(std::string_view name) {
    if (const auto it = index_.find(std::string(name)); it != index_.end()) return it->second;
    out_.families.push_back({std::string(name), MetricType::Untyped, {}, {}});
    index_.emplace(std::string(name), out_.families.size() - 1);
    return out_.families.size() - 1;
  }

  void comment(long no, std::string_view rest) {
    std::size_t i = 0;
    while (i < rest.size() && isBlank(rest[i])) ++i;
    rest.remove_prefix(i);
    const bool help = rest.starts_with("HELP") && (rest.size() == 4 || isBlank(rest[4]));
    const bool type = rest.starts_with("TYPE") && (rest.size() == 4 || isBlank(rest[4]));
    if (!help && !type) return;  // any other comment is free text
    rest.remove_prefix(4);
    while (!rest.empty() && isBlank(rest.front())) rest.remove_prefix(1);
    std::size_t n = 0;
    while (n < rest.size() && isNameChar(rest[n])) ++n;
    const std::string_view name = rest.substr(0, n);
    if (name.empty() || !isNameStart(name.front())) {
      problem(no, help ? "HELP" : "TYPE", "expected a metric name, got " + quotedExcerpt(rest));
      return;
    }
    rest.remove_prefix(n);
    if (!rest.empty() && !isBlank(rest.front())) {
      problem(no, std::string(name), "expected a blank after the metric name, got " + quotedExcerpt(rest));
      return;
    }
    while (!rest.empty() && isBlank(rest.front())) rest.remove_prefix(1);
    MetricFamily& f = out_.families[familyFor(name)];
    if (help) {
      std::string text;
      for (std::size_t k = 0; k < rest.size(); ++k) {
        if (rest[k] == '\\' && k + 1 < rest.size() && (rest[k + 1] == '\\' || rest[k + 1] == 'n')) {
          text += rest[++k] == 'n' ? '\n' : '\\';
        } else {
          text += rest[k];
        }
      }
      if (helped_.count(f.name)) problem(no, f.name, "expected one HELP line per metric, got a second");
      helped_.insert(f.name);
      f.help = std::move(text);
      return;
    }
    while (!rest.empty() && isBlank(rest.back())) rest.remove_suffix(1);
    static constexpr std::pair<std::string_view, MetricType> kTypes[] = {{"counter", MetricType::Counter},
                                                                         {"gauge", MetricType::Gauge},
                                                                         {"histogram", MetricType::Histogram},
                                                                         {"summary", MetricType::Summary},
                                                                         {"untyped", MetricType::Untyped}};
    const auto* t = std::find_if(std::begin(kTypes), std::end(kTypes), [&](auto& k) { return k.first == rest; });
    if (t == std::end(kTypes)) {
      problem(no, f.name,
              "expected a type (counter, gauge, histogram, summary or untyped), got " + quotedExcerpt(rest));
      return;
    }
    if (typed_.count(f.name)) {
      problem(no, f.name, "expected one TYPE line per metric, got a second");
      return;
    }
    if (!f.samples.empty()) {
      problem(no, f.name,
              "expected TYPE before the metric's first sample (line " + std::to_string(f.samples.front().line) + ")");
      return;
    }
    typed_.insert(f.name);
    f.type = t->second;
  }

  // The family a sample belongs to: a declared histogram or summary owns its suffixed series.
  std::size_t familyOfSample(std::string_view name) {
    // prometheus_client declares counters without "_total" and adds "_created" series.
    for (std::string_view suffix : {"_bucket", "_sum", "_count", "_total", "_created"}) {
      if (!name.ends_with(suffix)) continue;
      const auto base = index_.find(std::string(name.substr(0, name.size() - suffix.size())));
      if (base == index_.end()) continue;
      const MetricType t = out_.families[base->second].type;
      const bool owns = suffix == "_created"  ? t != MetricType::Gauge && t != MetricType::Untyped
                        : suffix == "_total"  ? t == MetricType::Counter
                        : suffix == "_bucket" ? t == MetricType::Histogram
                                              : t == MetricType::Histogram || t == MetricType::Summary;
      if (owns) return base->second;
    }
    return familyFor(name);
  }

  void sample(long no, std::string_view text) {
    std::size_t i = 0;
    while (i < text.size() && isNameChar(text[i])) ++i;
    if (i == 0 || !isNameStart(text[0])) {
      problem(no, "",
              "expected a metric name (letters, digits, '_' or ':', not starting with a digit), got " +
                  quotedExcerpt(text));
      return;
    }
    MetricSample s;
    s.name = std::string(text.substr(0, i));
    s.line = no;
    std::size_t k = i;
    while (k < text.size() && isBlank(text[k])) ++k;
    std::size_t before_value = i;  // a blank must separate the name (or the '}') from the value
    if (k < text.size() && text[k] == '{') {
      if (!labels(no, text, ++k, s)) return;
      before_value = k;
      while (k < text.size() && isBlank(text[k])) ++k;
    }
    if (k == before_value && k < text.size()) {
      problem(no, s.name, "expected a blank before the value, got " + quotedExcerpt(text.substr(k)));
      return;
    }
    std::size_t end = k;
    while (end < text.size() && !isBlank(text[end])) ++end;
    const std::string_view value_text = text.substr(k, end - k);
    if (value_text.empty()) {
      problem(no, s.name, "expected a value, got the end of the line");
      return;
    }
    const auto value = parseValue(value_text);
    if (!value) {
      problem(no, s.name, "expected a number (a float, +Inf, -Inf or NaN), got " + quotedExcerpt(value_text));
      return;
    }
    s.value = *value;
    k = end;
    while (k < text.size() && isBlank(text[k])) ++k;
    if (k < text.size()) {
      end = k;
      while (end < text.size() && !isBlank(text[end])) ++end;
      const auto ts = parseTimestamp(text.substr(k, end - k));
      if (!ts) {
        problem(no, s.name, "expected a timestamp (integer milliseconds), got " + quotedExcerpt(text.substr(k)));
        return;
      }
      s.timestamp_ms = ts;
      k = end;
      while (k < text.size() && isBlank(text[k])) ++k;
      if (k < text.size()) {
        problem(no, s.name, "expected the end of the line after the timestamp, got " + quotedExcerpt(text.substr(k)));
        return;
      }
    }
    if (out_.samples >= limits_.max_samples) {
      problem(no, s.name, "expected at most " + std::to_string(limits_.max_samples) + " samples; the rest are ignored");
      return;
    }
    std::string key = s.name + '\x1d' + seriesKey(s, "");
    if (!series_.insert(std::move(key)).second) {
      problem(no, s.name, "expected each series once, got a duplicate of an earlier sample with the same labels");
      return;
    }
    last_sample_line_ = no;
    ++out_.samples;
    out_.families[familyOfSample(s.name)].samples.push_back(std::move(s));
  }

  // Reads a label value's text up to its closing '"' (k just after the opening one; left after the
  // closing one), unescaping \\, \" and \n.
  bool labelValue(long no, std::string_view text, std::size_t& k, const MetricSample& s, MetricLabel& label) {
    bool closed = false;
    while (k < text.size()) {
      const char c = text[k++];
      if (c == '"') {
        closed = true;
        break;
      }
      if (c != '\\') {
        label.value += c;
        continue;
      }
      const char e = k < text.size() ? text[k++] : '\0';
      if (e == '\\' || e == '"') {
        label.value += e;
      } else if (e == 'n') {
        label.value += '\n';
      } else {
        problem(no, s.name + "{" + label.name + "}",
                "expected an escape \\\\, \\\" or \\n in the label value, got " + quotedExcerpt(std::string("\\") + e));
        return false;
      }
    }
    if (!closed) {
      problem(no, s.name + "{" + label.name + "}", "expected a closing '\"', got the end of the line");
      return false;
    }
    return true;
  }

  // Parses `name="value",...}` from text[k] (just after '{'); leaves k after '}'.
  bool labels(long no, std::string_view text, std::size_t& k, MetricSample& s) {
    const auto skip = [&] {
      while (k < text.size() && isBlank(text[k])) ++k;
    };
    while (true) {
      skip();
      if (k >= text.size()) {
        problem(no, s.name, "expected a label or '}', got the end of the line");
        return false;
      }
      if (text[k] == '}') {
        ++k;
        return true;
      }
      std::size_t n = k;
      while (n < text.size() && isLabelChar(text[n])) ++n;
      if (n == k || !isLabelStart(text[k])) {
        problem(no, s.name, "expected a label name, got " + quotedExcerpt(text.substr(k)));
        return false;
      }
      MetricLabel label{std::string(text.substr(k, n - k)), {}};
      k = n;
      skip();
      if (k >= text.size() || text[k] != '=') {
        problem(no, s.name + "{" + label.name + "}",
                "expected '=' after the label name, got " + quotedExcerpt(text.substr(k)));
        return false;
      }
      ++k;
      skip();
      if (k >= text.size() || text[k] != '"') {
        problem(no, s.name + "{" + label.name + "}",
                "expected a quoted label value, got " + quotedExcerpt(text.substr(k)));
        return false;
      }
      ++k;
      if (!labelValue(no, text, k, s, label)) return false;
      if (s.label(label.name)) {
        problem(no, s.name + "{" + label.name + "}", "expected each label once, got it twice");
        return false;
      }
      if (s.labels.size() >= limits_.max_labels) {
        problem(no, s.name, "expected at most " + std::to_string(limits_.max_labels) + " labels");
        return false;
      }
      s.labels.push_back(std::move(label));
      skip();
      if (k < text.size() && text[k] == ',') {
        ++k;
        continue;
      }
      if (k < text.size() && text[k] == '}') {
        ++k;
        return true;
      }
      problem(no, s.name,
              "expected ',' or '}' after a label, got " +
                  (k < text.size() ? quotedExcerpt(text.substr(k)) : "the end of the line"));
      return false;
    }
  }

  struct Series {
    std::vector<std::pair<double, const MetricSample*>> buckets;
    const MetricSample* count = nullptr;
    const MetricSample* sum = nullptr;
    long last_line = 0;
  };

  // Buckets are cumulative and end with +Inf, and _count equals the +Inf bucket. A histogram cut
  // off at the end of the body is the truncation the vLLM sample shows.
  void checkHistograms(bool ends_mid_line) {
    for (const auto& f : out_.families) {
      if (f.type != MetricType::Histogram) continue;
      std::map<std::string, Series> groups;
      for (const auto& s : f.samples) {
        Series& g = groups[seriesKey(s, "le")];
        g.last_line = std::max(g.last_line, s.line);
        if (s.name.ends_with("_created")) continue;
        if (s.name.ends_with("_count")) {
          g.count = &s;
        } else if (s.name.ends_with("_sum")) {
          g.sum = &s;
        } else {
          const std::string* le = s.label("le");
          const auto bound = le ? parseValue(*le) : std::nullopt;
          if (!le) {
            problem(s.line, f.name, "expected an 'le' label on a histogram bucket");
          } else if (!bound || std::isnan(*bound)) {
            problem(s.line, f.name + "{le}", "expected a bucket bound (a number or +Inf), got " + quotedExcerpt(*le));
          } else {
            g.buckets.push_back({*bound, &s});
          }
        }
      }
      for (auto& [key, g] : groups) {
        std::stable_sort(g.buckets.begin(), g.buckets.end(), [](auto& a, auto& b) { return a.first < b.first; });
        const MetricSample* prev = nullptr;
        for (const auto& [bound, s] : g.buckets) {
          if (s->value < 0 || std::isnan(s->value))
            problem(s->line, f.name, "expected a bucket count >= 0, got " + formatLe(s->value));
          if (prev && prev->value > s->value)
            problem(s->line, f.name,
                    "expected cumulative buckets: le=" + formatLe(bound) + " counts " + formatLe(s->value) +
                        ", fewer than " + formatLe(prev->value) + " at a lower bound (line " +
                        std::to_string(prev->line) + ")");
          prev = s;
        }
        const bool has_inf = !g.buckets.empty() && std::isinf(g.buckets.back().first) && g.buckets.back().first > 0;
        const bool at_end = g.last_line == last_sample_line_;
        if ((!has_inf || !g.count) && at_end && (ends_mid_line || (!has_inf && !g.count))) {
          out_.truncated = true;
          problem(g.last_line, f.name,
                  "the body ends inside this histogram (last bucket le=" +
                      (g.buckets.empty() ? std::string("none") : formatLe(g.buckets.back().first)) +
                      ", no +Inf bucket" + (g.count ? "" : ", no _count") + "): it looks truncated");
          continue;
        }
        if (!has_inf) problem(g.last_line, f.name, "expected a bucket le=\"+Inf\", got none");
        if (!g.count) problem(g.last_line, f.name, "expected a " + f.name + "_count sample, got none");
        if (has_inf && g.count && g.count->value != g.buckets.back().second->value)
          problem(g.count->line, f.name + "_count",
                  "expected the +Inf bucket's count " + formatLe(g.buckets.back().second->value) + ", got " +
                      formatLe(g.count->value));
      }
    }
  }

  const ExpositionLimits& limits_;
  Exposition& out_;
  std::unordered_map<std::string, std::size_t> index_;
  std::set<std::string> typed_, helped_, series_;
  long last_sample_line_ = 0;
};

}  // namespace

Exposition ExpositionParser::parse(std::string_view body) const {
  Exposition out;
  Run run(limits_, out);
  if (body.size() > limits_.max_body_bytes) {
    run.problem(0, "",
                "expected a body of at most " + std::to_string(limits_.max_body_bytes) + " bytes, got " +
                    std::to_string(body.size()));
    return out;
  }
  long no = 0;
  std::size_t start = 0;
  while (start < body.size()) {
    const std::size_t nl = body.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? body.size() : nl;
    run.line(++no, body.substr(start, end - start));
    start = end + 1;
  }
  out.lines = no;
  // Exporters end every line with '\n': a body that stops mid-line was cut in transit.
  const bool ends_mid_line = !body.empty() && body.back() != '\n';
  if (ends_mid_line) {
    out.truncated = true;
    run.problem(no, "", "expected the body to end with a newline: the last line looks cut");
  }
  run.finish(ends_mid_line);
  return out;
}

}  // namespace kvscope
