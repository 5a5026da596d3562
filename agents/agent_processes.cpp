#include "agents/agent_processes.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "common/errors.hpp"

namespace agents {

AgentProcesses::AgentProcesses(int count, const std::vector<std::string>& common_args, std::ostream* log) : log_(log) {
  const pid_t parent = ::getpid();
  for (int k = 0; k < count; ++k) {
    std::vector<std::string> args = {"orchestra", "agent"};
    args.insert(args.end(), common_args.begin(), common_args.end());
    args.push_back("--index");
    args.push_back(std::to_string(k));
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw common::SystemError(std::string("cannot start an agent process: ") + std::strerror(errno));
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
      ::execv("/proc/self/exe", argv.data());
      ::_exit(127);
    }
    processes_.push_back(AgentProcess{k, pid, true, -1, 0});
    if (log_) *log_ << "[train] agent process " << k << ": pid " << pid << std::endl;
  }
}

AgentProcesses::~AgentProcesses() { stop_all(std::chrono::milliseconds(5000)); }

void AgentProcesses::reap(AgentProcess& p, int status) {
  p.running = false;
  if (WIFEXITED(status)) p.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) p.signal = WTERMSIG(status);
  if (!log_) return;
  *log_ << "[train] agent process " << p.index << " (pid " << p.pid << ") ";
  if (p.signal) *log_ << "killed by signal " << p.signal;
  else *log_ << "exited with status " << p.exit_code;
  *log_ << std::endl;
}

int AgentProcesses::poll() {
  int running = 0;
  for (auto& p : processes_) {
    if (!p.running) continue;
    int status = 0;
    const pid_t r = ::waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) reap(p, status);
    else ++running;
  }
  return running;
}

void AgentProcesses::stop_all(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (poll() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int sig : {SIGTERM, SIGKILL}) {
    if (poll() == 0) return;
    for (auto& p : processes_)
      if (p.running) ::kill(p.pid, sig);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (poll() > 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& p : processes_)  // SIGKILL cannot be refused: collect the last ones
    if (p.running) {
      int status = 0;
      if (::waitpid(p.pid, &status, 0) == p.pid) reap(p, status);
    }
}

}  // namespace agents
