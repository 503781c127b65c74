#pragma once
// The hidden temporaries a one-shot command is writing (an import's or an export's .NAME.partial),
// removed when SIGINT or SIGTERM ends the process: a Ctrl+C must not leave a half-file behind. The
// commands that stop cleanly on their own (serve, sweep, calibrate: they block both signals and
// cancel their work) never see the handler run. A SIGKILL cannot be caught: the next writer of the
// same output takes the stale temporary over (AtomicFile::openForWrite locks and truncates it).
//
// The handler only unlinks and re-raises, both async-signal-safe; paths live in fixed slots so
// registering never allocates where the handler could see it half-built.
#include <string>

namespace kvscope {

class TemporaryFiles {
 public:
  // Installs the SIGINT/SIGTERM handler once per process (kvscope-cli's main does).
  static void removeOnInterrupt();

  // Registers `path` for the life of the guard; a path too long for a slot, or with every slot
  // taken, is simply not registered (the temporary is then left as before, never a crash).
  class Guard {
   public:
    explicit Guard(const std::string& path);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    int slot_ = -1;
  };
};

}  // namespace kvscope
