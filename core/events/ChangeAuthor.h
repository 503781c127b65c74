#pragma once
// Who made an operator change (a knob, the policy, pause/resume/speed/seek, a run marker). `who` is
// a label the caller chose ("console@ana", "sweep.py") and proves nothing: anyone reaching the
// server can send "console". The origin is what the server itself saw and checked - the caller's
// address and how the call was admitted - so a recording or a console can tell a real console's
// change from an impersonation. A change made inside this process (the embedded console,
// a scenario, the session's own end) has no origin.
#include <string>

namespace kvscope {

struct ChangeOrigin {
  std::string peer;  // the caller's address as the server saw it: "127.0.0.1:53012", "[::1]:5000", "unix:/run/k.sock"
  std::string identity;  // how the call was admitted: "token" (it carried the --token-file bearer token) or
                         // "open" (the server has no token; anyone who reached it could make the change)
  bool remote() const { return !peer.empty() || !identity.empty(); }
  bool operator==(const ChangeOrigin&) const = default;
};

// A change's label and origin, as the run's controls take them. Implicit from a label: a change made
// in this process is named, never located.
struct ChangeAuthor {
  std::string who;
  ChangeOrigin origin;

  ChangeAuthor() = default;
  ChangeAuthor(std::string label, ChangeOrigin from = {}) : who(std::move(label)), origin(std::move(from)) {}
  ChangeAuthor(const char* label) : who(label) {}
};

}  // namespace kvscope
