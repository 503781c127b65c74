#include "core/router/ObservationCheck.h"

#include "core/model/Overloaded.h"

namespace kvscope {

namespace {

class Checker {
 public:
  explicit Checker(const ObservationLimits& limits) : limits_(limits) {}

  // `value` in [min, max]; the first failure is kept.
  void range(const char* field, std::int64_t value, std::int64_t min, std::int64_t max, const char* what_max) {
    if (error_) return;
    if (value < min)
      error_ = std::string(field) + ": " + std::to_string(value) +
               (min == 0 ? " is negative" : " is below " + std::to_string(min));
    else if (value > max)
      error_ =
          std::string(field) + ": " + std::to_string(value) + " is over " + what_max + " (" + std::to_string(max) + ")";
  }
  // Tokens a worker holds or moves: within its KV pool.
  void tokens(const char* field, std::int64_t value, WorkerId worker) {
    const std::int64_t capacity = capacityOf(worker);
    range(field, value, 0, capacity,
          capacity == limits_.max_tokens ? "the most tokens a request may have" : "the worker's KV capacity");
  }
  void requestTokens(const char* field, std::int64_t value) {
    range(field, value, 0, limits_.max_tokens, "the most tokens a request may have");
  }
  void time(const char* field, SimTime value, SimTime min = 0) {
    range(field, value, min, kMaxObservedTime, "30 days in us");
  }
  void bytes(const char* field, std::int64_t value) { range(field, value, 0, kMaxObservedBytes, "1 TiB"); }
  void count(const char* field, std::int64_t value) {
    range(field, value, 0, kMaxObservedCount, "the most a report may count");
  }
  void fail(std::string why) {
    if (!error_) error_ = std::move(why);
  }
  std::optional<std::string> result() && { return std::move(error_); }

 private:
  std::int64_t capacityOf(WorkerId w) const {
    if (w >= 0 && static_cast<std::size_t>(w) < limits_.kv_capacity.size() &&
        limits_.kv_capacity[static_cast<std::size_t>(w)] > 0)
      return limits_.kv_capacity[static_cast<std::size_t>(w)];
    return limits_.max_tokens;
  }
  const ObservationLimits& limits_;
  std::optional<std::string> error_;
};

}  // namespace

std::optional<std::string> checkObservationNumbers(const EventPayload& payload, const ObservationLimits& limits) {
  Checker c(limits);
  std::visit(Overloaded{
                 [&](const Admission& a) { c.tokens("admission.tokens", a.tokens, a.worker); },
                 [&](const SeedStarted& s) { c.tokens("seed.tokens", s.tokens, s.worker); },
                 [&](const TransferStarted& t) {
                   c.tokens("transfer_start.tokens", t.tokens, t.worker);
                   c.bytes("transfer_start.bytes", t.bytes);
                   c.time("transfer_start.queue_wait_us", t.queue_wait);
                 },
                 [&](const TransferFinished& t) {
                   c.tokens("transfer_end.tokens", t.tokens, t.worker);
                   c.bytes("transfer_end.bytes", t.bytes);
                 },
                 [&](const Eviction& e) {
                   c.tokens("eviction.tokens_freed", e.tokens_freed, e.worker);
                   c.count("eviction.sessions_hit", e.sessions_hit);
                 },
                 [&](const LinkHealth& l) { c.count("link.aborted_requests", l.aborted_requests); },
                 [&](const WorkerCrashed& w) { c.count("crash.aborted_requests", w.aborted_requests); },
                 [&](const Correction& r) {
                   c.tokens("correction.fill_len", r.fill_len, r.worker);
                   c.tokens("correction.prefix_len", r.prefix_len, r.worker);
                   c.tokens("correction.kv_committed_len", r.kv_committed_len, r.worker);
                 },
                 [&](const RequestDone& d) {
                   c.range("request_done.turn", d.turn, 0, kMaxObservedCount, "the most a report may count");
                   c.requestTokens("request_done.input_tokens", d.input_tokens);
                   c.requestTokens("request_done.output_tokens", d.output_tokens);
                   c.time("request_done.e2e_us", d.e2e);
                   c.time("request_done.ttft_us", d.ttft, -1);  // -1: no token was produced
                   if (d.ttft > d.e2e)
                     c.fail("request_done.ttft_us: " + std::to_string(d.ttft) + " is after e2e_us (" +
                            std::to_string(d.e2e) + ")");
                 },
                 [](const auto&) {},
             },
             payload);
  return std::move(c).result();
}

}  // namespace kvscope
