#include "bench/soak/ServeProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace kvscope::soak {

namespace {

constexpr std::size_t kLastLines = 20;

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

ServeProcess::ServeProcess(const std::string& cli, std::vector<std::string> args) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  args.insert(args.begin(), {cli, "serve"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, cli.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  out_fd_ = pipe_fds[0];
  if (rc != 0) {
    ::close(out_fd_);
    throw std::runtime_error("cannot start " + cli + ": " + std::strerror(rc));
  }
  // The announcements come first; read them line by line, 30 s at most.
  const bool wants_metrics = std::find(args.begin(), args.end(), "--metrics") != args.end();
  std::string pending, seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (grpc_.empty() || (wants_metrics && metrics_.empty())) {
    pollfd p{out_fd_, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    char buf[4096];
    const ssize_t got =
        left.count() > 0 && ::poll(&p, 1, static_cast<int>(left.count())) > 0 ? ::read(out_fd_, buf, sizeof buf) : 0;
    if (got <= 0) {
      stop();
      throw std::runtime_error("kvscope-cli serve did not announce its addresses; it printed:\n" + seen + pending);
    }
    pending.append(buf, static_cast<std::size_t>(got));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      seen += line + "\n";
      if (startsWith(line, "listening on ")) grpc_ = line.substr(std::strlen("listening on "));
      if (startsWith(line, "metrics on http://")) {
        metrics_ = line.substr(std::strlen("metrics on http://"));
        metrics_ = metrics_.substr(0, metrics_.find('/'));
      }
    }
  }
  drainer_ = std::thread([this] { drain(); });
}

ServeProcess::~ServeProcess() { stop(); }

void ServeProcess::drain() {
  std::string pending;
  char buf[8192];
  while (true) {
    const ssize_t got = ::read(out_fd_, buf, sizeof buf);
    if (got <= 0) break;
    pending.append(buf, static_cast<std::size_t>(got));
    std::lock_guard lock(mutex_);
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      // spdlog's default pattern: "[date] [level] message".
      const auto open = line.find("] [");
      if (open != std::string::npos) {
        const auto close = line.find(']', open + 3);
        const std::string level = close == std::string::npos ? "" : line.substr(open + 3, close - open - 3);
        bool counted = false;
        for (auto& [name, n] : levels_)
          if (name == level) ++n, counted = true;
        if (!counted) levels_.emplace_back(level, 1);
      }
      last_.push_back(std::move(line));
      if (last_.size() > kLastLines) last_.erase(last_.begin());
    }
  }
}

long ServeProcess::rssKiB() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (startsWith(line, "VmRSS:")) return std::stol(line.substr(6));
  return -1;
}

double ServeProcess::cpuSeconds() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

long ServeProcess::logLines(const char* level) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, n] : levels_)
    if (name == level) return n;
  return 0;
}

std::vector<std::string> ServeProcess::lastLines() const {
  std::lock_guard lock(mutex_);
  return last_;
}

int ServeProcess::stop() {
  if (pid_ <= 0) return status_;
  ::kill(pid_, SIGINT);
  int status = 0;
  for (int i = 0; i < 300; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) break;
    if (i == 299) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  pid_ = -1;
  if (drainer_.joinable()) drainer_.join();  // the pipe's write end closed with the process
  if (out_fd_ >= 0) ::close(out_fd_);
  out_fd_ = -1;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return status_;
}

}  // namespace kvscope::soak
