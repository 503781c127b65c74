#include "core/io/TemporaryFiles.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace kvscope {

namespace {

constexpr int kSlots = 16;
constexpr std::size_t kPathBytes = 4096;

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 holds a path the handler may unlink
  char path[kPathBytes];
};
Slot slots[kSlots];

extern "C" void removeAndReraise(int sig) {
  for (auto& s : slots)
    if (s.state.load() == 2) ::unlink(s.path);
  std::signal(sig, SIG_DFL);  // then die of the signal, so the parent sees how we ended
  std::raise(sig);
}

}  // namespace

void TemporaryFiles::removeOnInterrupt() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  struct sigaction action {};
  action.sa_handler = removeAndReraise;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

TemporaryFiles::Guard::Guard(const std::string& path) {
  if (path.size() >= kPathBytes) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(2);
    slot_ = i;
    return;
  }
}

TemporaryFiles::Guard::~Guard() {
  if (slot_ >= 0) slots[slot_].state.store(0);
}

}  // namespace kvscope
