#pragma once
// A `kvscope-cli serve` child process for bench_soak: started with its arguments, its addresses read
// from the lines it announces ("listening on ...", "metrics on http://.../metrics"), its output
// drained (and its warnings counted) so it never blocks on a full pipe, its RSS and CPU read from
// /proc, stopped with SIGINT as an operator would.
#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kvscope::soak {

class ServeProcess {
 public:
  // Throws std::runtime_error with what it printed when it exits or says nothing usable in 30 s.
  ServeProcess(const std::string& cli, std::vector<std::string> args);
  ~ServeProcess();  // stop()

  const std::string& grpcAddress() const { return grpc_; }
  const std::string& metricsAddress() const { return metrics_; }  // HOST:PORT; empty without --metrics
  pid_t pid() const { return pid_; }

  long rssKiB() const;                         // VmRSS now; -1 once it has exited
  double cpuSeconds() const;                   // user + system so far
  long logLines(const char* level) const;      // lines at "[warning]", "[error]", ... so far
  std::vector<std::string> lastLines() const;  // the last few lines it printed

  // SIGINT, then waits up to 30 s (SIGKILL after); returns its exit status as the shell shows it.
  int stop();

 private:
  void drain();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string grpc_, metrics_;
  std::thread drainer_;
  mutable std::mutex mutex_;
  std::vector<std::string> last_;
  std::vector<std::pair<std::string, long>> levels_;
  int status_ = -1;
};

}  // namespace kvscope::soak
