#include "env/real/launcher.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "env/real/c10d_backend_registry.hpp"
#include "common/errors.hpp"

namespace env {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kGrace = std::chrono::seconds(10);
// Rank 0 runs the policy and writes the results: once it has ended, nothing is left to wait for.
constexpr auto kAfterRankZero = std::chrono::seconds(2);
constexpr auto kPoll = std::chrono::milliseconds(20);

std::string self_binary() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw common::SystemError("cannot find this binary (/proc/self/exe) to start the workers");
  return std::string(buf, static_cast<std::size_t>(n));
}

struct Child {
  pid_t pid = -1;
  int rank = 0;
  bool running = true;
  int status = 0;
};

std::string describe_exit(const Child& c) {
  const std::string who = "worker rank " + std::to_string(c.rank) + " (pid " + std::to_string(c.pid) + ")";
  if (WIFSIGNALED(c.status)) return who + " was killed by signal " + std::to_string(WTERMSIG(c.status)) + " (" + ::strsignal(WTERMSIG(c.status)) + ")";
  return who + " exited with status " + std::to_string(WEXITSTATUS(c.status));
}

bool failed(const Child& c) { return !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0); }

pid_t start_worker(const std::string& binary, const LaunchOptions& o, int local_rank, int port) {
  const int rank = o.node_rank * o.nproc + local_rank;
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> env_strings = {
      "RANK=" + std::to_string(rank), "WORLD_SIZE=" + std::to_string(o.nnodes * o.nproc), "LOCAL_RANK=" + std::to_string(local_rank),
      "MASTER_ADDR=" + o.master_addr, "MASTER_PORT=" + std::to_string(port), "ORCHESTRA_TIMEOUT_MS=" + std::to_string(o.timeout.count()),
      "ORCHESTRA_BACKEND=" + o.backend};
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    bool replaced = false;
    for (const auto& mine : env_strings) replaced = replaced || entry.compare(0, mine.find('=') + 1, mine, 0, mine.find('=') + 1) == 0;
    if (!replaced) envp.push_back(*e);
  }
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {binary, "worker"};
  args.insert(args.end(), o.worker_args.begin(), o.worker_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) throw common::SystemError(std::string("cannot start a worker: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // A worker must not outlive its launcher (a killed launcher would leave orphans training).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw common::UsageError(std::string("the environment variable ") + name + " is not set (workers are started by orchestra launch)");
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 1 << 30) throw common::UsageError(std::string(name) + "=" + v + ": expected a non-negative integer");
  return static_cast<int>(n);
}

}  // namespace

env::RendezvousSpec rendezvous_from_environment() {
  env::RendezvousSpec spec;
  spec.rank = env_int("RANK");
  spec.world_size = env_int("WORLD_SIZE");
  spec.local_rank = std::getenv("LOCAL_RANK") ? env_int("LOCAL_RANK") : 0;
  const char* addr = std::getenv("MASTER_ADDR");
  spec.master_addr = addr && *addr ? addr : "127.0.0.1";
  spec.master_port = env_int("MASTER_PORT");
  if (std::getenv("ORCHESTRA_TIMEOUT_MS")) spec.timeout = std::chrono::milliseconds(env_int("ORCHESTRA_TIMEOUT_MS"));
  const char* backend = std::getenv("ORCHESTRA_BACKEND");
  const std::string b = backend ? backend : "gloo";
  if (!find_c10d_backend(b)) throw common::UsageError("ORCHESTRA_BACKEND=" + b + ": expected a c10d backend (orchestra launch --help lists them)");
  spec.backend = b;
  return spec;
}

LaunchOutcome launch_workers(const LaunchOptions& o) {
  const std::string binary = self_binary();
  std::optional<env::RendezvousServer> server;
  int port = o.master_port;
  if (o.node_rank == 0) {
    server.emplace(o.master_port, o.timeout);
    port = server->port();
  }
  if (!o.quiet)
    std::cerr << "orchestra launch: node " << o.node_rank << "/" << o.nnodes << ": starting ranks " << o.node_rank * o.nproc << "-"
              << (o.node_rank + 1) * o.nproc - 1 << " of " << o.nnodes * o.nproc << " (" << o.backend << ", rendezvous "
              << o.master_addr << ":" << port << ", timeout " << o.timeout.count() / 1000.0 << " s)\n";
  std::vector<Child> children;
  for (int local = 0; local < o.nproc; ++local) {
    try {
      children.push_back({start_worker(binary, o, local, port), o.node_rank * o.nproc + local});
    } catch (const std::exception&) {
      for (auto& c : children) ::kill(c.pid, SIGKILL);
      for (auto& c : children) ::waitpid(c.pid, nullptr, 0);
      throw;
    }
  }

  std::optional<Clock::time_point> deadline;  // set at the first failure
  LaunchOutcome outcome;
  std::vector<std::size_t> failures;  // children that failed, in the order they were reaped
  std::string killed_by_us;
  std::size_t running = children.size();
  while (running > 0) {
    for (std::size_t i = 0; i < children.size(); ++i) {
      Child& c = children[i];
      if (!c.running) continue;
      const pid_t r = ::waitpid(c.pid, &c.status, WNOHANG);
      if (r == 0) continue;
      c.running = false;
      --running;
      if (failed(c)) {
        failures.push_back(i);
        if (!deadline) deadline = Clock::now() + o.timeout + kGrace;
      }
      if (deadline && c.rank == 0) deadline = std::min(*deadline, Clock::now() + kAfterRankZero);
    }
    if (deadline && Clock::now() > *deadline) {
      for (auto& c : children)
        if (c.running) {
          ::kill(c.pid, SIGKILL);
          ::waitpid(c.pid, &c.status, 0);
          c.running = false;
          --running;
          killed_by_us += "; worker rank " + std::to_string(c.rank) + " did not stop within the timeout and was killed";
        }
    }
    if (o.on_wait) o.on_wait(static_cast<int>(running));
    if (running > 0) std::this_thread::sleep_for(kPoll);
  }
  if (!failures.empty()) {
    // The cause first: a worker that died of a signal (killed, crashed) brings its peers down with
    // a failed collective a few ms later, and which of them is reaped first is a race.
    std::stable_partition(failures.begin(), failures.end(), [&](std::size_t i) { return WIFSIGNALED(children[i].status); });
    // Every failed worker refused its input (a config error: exit 2, as `orchestra run` would): so
    // does the launch. Anything else (a crash, a lost peer) is 1.
    const bool bad_input = std::all_of(failures.begin(), failures.end(), [&](std::size_t i) {
      return WIFEXITED(children[i].status) && WEXITSTATUS(children[i].status) == 2;
    });
    outcome.exit_code = bad_input && killed_by_us.empty() ? 2 : 1;
    for (std::size_t k = 0; k < failures.size(); ++k) outcome.message += (k ? "; " : "") + describe_exit(children[failures[k]]);
    outcome.message += killed_by_us;
  }
  return outcome;
}

}  // namespace env
