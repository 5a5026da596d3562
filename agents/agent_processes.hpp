// The K agent processes of `orchestra train`: this same binary re-run as `orchestra agent`, one
// process per agent so each has its own environment, libtorch state and crash domain (a killed
// agent takes nobody with it). Each child dies with its parent (PR_SET_PDEATHSIG), so a killed
// trainer leaves no orphans training against a vanished server.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace agents {

struct AgentProcess {
  int index = 0;
  pid_t pid = -1;
  bool running = false;
  int exit_code = -1;  // when exited normally
  int signal = 0;      // when killed by a signal
};

class AgentProcesses {
 public:
  // Starts `orchestra agent <args_for(k)>` for k = 0..count-1; the children's output goes to ours.
  AgentProcesses(int count, const std::vector<std::string>& common_args, std::ostream* log);
  ~AgentProcesses();  // stop_all(5 s)
  AgentProcesses(const AgentProcesses&) = delete;
  AgentProcesses& operator=(const AgentProcesses&) = delete;

  // Reaps the children that ended (non-blocking) and reports each once. Returns how many still run.
  int poll();
  // Waits up to `grace` for every child to end, then SIGTERM, then SIGKILL after one more second.
  void stop_all(std::chrono::milliseconds grace);
  const std::vector<AgentProcess>& processes() const { return processes_; }

 private:
  void reap(AgentProcess& p, int status);
  std::vector<AgentProcess> processes_;
  std::ostream* log_;
};

}  // namespace agents
