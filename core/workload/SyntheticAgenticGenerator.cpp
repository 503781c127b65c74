#include "core/workload/SyntheticAgenticGenerator.h"

#include <algorithm>
#include <cmath>

#include "core/trace/BlockChain.h"

namespace kvscope {

namespace {
constexpr std::uint64_t kBoilerplateScope = 0xb011e9a7e5c0de01ULL;
constexpr std::uint64_t kSessionSalt = 0x5e55104a9e47ULL;

std::int32_t tokens(double v) { return static_cast<std::int32_t>(std::clamp(std::round(v), 0.0, 2.0e9)); }
}  // namespace

double RecordedService::seconds(std::int64_t cached, std::int64_t uncached, std::int64_t output) const {
  if (prefill_tokens_per_s <= 0) return 0;
  const auto c = static_cast<double>(cached), n = static_cast<double>(uncached);
  const double prefill = prefill_overhead_s + n / prefill_tokens_per_s + prefill_per_context_token_s * n * (c + n / 2);
  // Decode: one iteration a token, the context growing from the prompt.
  const double out = static_cast<double>(output);
  const double iteration = decode_iteration_base_s + decode_iteration_per_request_s +
                           decode_iteration_per_context_token_s * (c + n + out / 2);
  return prefill + out * iteration;
}

Workload SyntheticAgenticGenerator::generate(const SyntheticAgenticSpec& spec, std::uint64_t seed, SessionId first_id,
                                             const RecordedService& service) {
  Workload w;
  SplitMix64 rng(mixHash(seed, 0x6e6572617465ULL));
  w.sessions.reserve(static_cast<std::size_t>(spec.sessions));
  for (int i = 0; i < spec.sessions; ++i) {
    Session s;
    s.id = first_id + static_cast<SessionId>(i);
    s.source = "synthetic#" + std::to_string(i);
    // Evenly spread starts with jitter inside each slot, so the start window is honoured exactly;
    // or Poisson arrivals: uniform starts, sorted below.
    const double slot = spec.sessions > 0 ? spec.start_window_s / spec.sessions : 0;
    s.start_s = spec.arrivals == SyntheticAgenticSpec::Arrivals::Poisson ? spec.start_window_s * rng.uniform01()
                                                                         : slot * i + slot * rng.uniform01();
    const std::int32_t boilerplate = tokens(spec.boilerplate_tokens.sample(rng));
    // Drawn only when the spec asks, so a workload without these fields keeps its random stream.
    const bool single = spec.single_turn_share > 0 && rng.uniform01() < spec.single_turn_share;
    const std::uint64_t variant =
        spec.boilerplate_variants > 1 ? rng.next() % static_cast<std::uint64_t>(spec.boilerplate_variants) : 0;
    const int turns = single ? 1 : std::max(1, static_cast<int>(std::lround(spec.turns.sample(rng))));
    std::int64_t input = boilerplate + std::max<std::int32_t>(1, tokens(spec.first_turn_tokens.sample(rng)));
    double t = 0;
    std::int64_t cached = boilerplate;  // what the recording cluster held of this turn's prompt
    for (int k = 0; k < turns && input <= spec.max_context_tokens; ++k) {
      Turn turn;
      turn.output_tokens = std::max<std::int32_t>(1, tokens(spec.output_tokens.sample(rng)));
      // Traces record think time in whole seconds, so a "0" is anything under a second.
      turn.think_s =
          (k == 0) ? 0.0 : (rng.uniform01() < spec.zero_think_probability ? rng.uniform01() : spec.think_s.sample(rng));
      t += turn.think_s;
      turn.offset_s = t;
      turn.prompt.input_tokens = static_cast<std::int32_t>(input);
      turn.prompt.shared_prefix_tokens = boilerplate;
      turn.prompt.shared_scope = variant == 0 ? kBoilerplateScope : mixHash(kBoilerplateScope, variant);
      turn.prompt.session_scope = mixHash(kSessionSalt, mixHash(seed, s.id));
      s.turns.push_back(std::move(turn));
      const std::int32_t output = s.turns.back().output_tokens;
      // The next turn is timed after this one's service (think time is added when it is drawn).
      t += service.seconds(std::min(cached, input), std::max<std::int64_t>(0, input - cached), output);
      cached = input + output;
      input += output + std::max<std::int32_t>(1, tokens(spec.new_tokens.sample(rng)));
    }
    w.sessions.push_back(std::move(s));
  }
  if (spec.arrivals == SyntheticAgenticSpec::Arrivals::Poisson)
    std::stable_sort(w.sessions.begin(), w.sessions.end(),
                     [](const Session& a, const Session& b) { return a.start_s < b.start_s; });
  return w;
}

}  // namespace kvscope
