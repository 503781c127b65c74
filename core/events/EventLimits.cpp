#include "core/events/EventLimits.h"

#include <algorithm>
#include <type_traits>

#include "core/model/Overloaded.h"

namespace kvscope {

namespace {

bool isContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Calls `f(text, limit)` on every free-text field of `payload`, or-ing the results.
template <typename P, typename F>
bool forEachText(P& payload, F&& f) {
  bool any = false;
  auto reason = [&](auto& s) { any = f(s, kMaxReasonBytes) || any; };
  auto label = [&](auto& s) { any = f(s, kMaxLabelBytes) || any; };
  std::visit(
      Overloaded{
          [&](auto& r) -> void {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, RunStarted>) {
              label(r.scenario), label(r.policy), label(r.profile);
              for (auto& w : r.workers) label(w.name);
              for (auto& w : r.prefill) label(w.name);
              for (auto& k : r.knobs) label(k.first);
            } else if constexpr (std::is_same_v<T, RouteDecision>) {
              label(r.policy);
            } else if constexpr (std::is_same_v<T, TransferFinished> || std::is_same_v<T, LinkHealth> ||
                                 std::is_same_v<T, WorkerCrashed>) {
              reason(r.reason);
            } else if constexpr (std::is_same_v<T, RequestDone>) {
              reason(r.error);
            } else if constexpr (std::is_same_v<T, KnobChanged>) {
              label(r.name), label(r.who), label(r.origin.peer), label(r.origin.identity);
            } else if constexpr (std::is_same_v<T, PolicyChanged>) {
              label(r.old_policy), label(r.new_policy), label(r.who), label(r.origin.peer), label(r.origin.identity);
            } else if constexpr (std::is_same_v<T, RunControlChanged>) {
              label(r.who), label(r.origin.peer), label(r.origin.identity);
            } else if constexpr (std::is_same_v<T, RunMarked>) {
              label(r.name), label(r.who), label(r.origin.peer), label(r.origin.identity);
              for (auto& [name, value] : r.parameters) label(name), label(value);
            } else if constexpr (std::is_same_v<T, WorkerHealthChanged>) {
              label(r.worker), reason(r.reason);
            } else if constexpr (std::is_same_v<T, RunFinished>) {
              for (auto& n : r.notes) reason(n);
            }
          },
      },
      payload);
  return any;
}

}  // namespace

bool capText(std::string& text, std::size_t max) {
  if (text.size() <= max) return false;
  max = std::max<std::size_t>(max, 64);
  // The marker's length depends on the count it states; a bound of it is reserved first.
  const std::size_t reserve = std::string("\n[... ").size() + 20 + std::string(" bytes cut ...]\n").size();
  std::size_t head = (max - reserve) / 2, tail_from = text.size() - (max - reserve - head);
  while (head > 0 && isContinuation(text[head])) --head;                           // [0, head) ends on a boundary
  while (tail_from < text.size() && isContinuation(text[tail_from])) ++tail_from;  // tail starts on one
  const std::string marker = "\n[... " + std::to_string(tail_from - head) + " bytes cut ...]\n";
  text = text.substr(0, head) + marker + text.substr(tail_from);
  return true;
}

bool exceedsTextLimits(const EventPayload& payload) {
  return forEachText(payload, [](const std::string& s, std::size_t max) { return s.size() > max; });
}

bool capEventText(EventPayload& payload) { return forEachText(payload, capText); }

}  // namespace kvscope
