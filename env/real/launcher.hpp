// `orchestra launch`: starts the worker processes of a real run on this machine, the way torchrun
// does. Node 0's launcher hosts the rendezvous store (c10d TCPStore); every worker is this same
// binary run as the hidden `orchestra worker` subcommand, told its place through torchrun's
// environment variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) plus
// ORCHESTRA_TIMEOUT_MS and ORCHESTRA_BACKEND.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "env/real/c10d_communicator.hpp"

namespace env {

struct LaunchOptions {
  int nproc = 1;                          // workers on this machine
  int nnodes = 1;                         // machines
  int node_rank = 0;                      // this machine's index; node 0 hosts the store
  std::string master_addr = "127.0.0.1";  // node 0's address, reachable from every machine
  int master_port = 0;                    // 0 (single machine only): a free port from the OS
  std::chrono::milliseconds timeout{120000};  // every collective and the rendezvous
  std::string backend = "gloo";           // a name in the c10d backend table (c10d_backend_registry.hpp)
  std::vector<std::string> worker_args;   // after `orchestra worker`: CONFIG, --out DIR, ...
  bool quiet = false;
  // Called between polls of the workers (every 20 ms) with how many of this machine's still run:
  // a progress line for a machine whose workers report none (rank 0 reports the run's).
  std::function<void(int running)> on_wait;
};

struct LaunchOutcome {
  int exit_code = 0;    // 0 when every worker exited 0
  std::string message;  // one line on failure: which rank failed first and how
};

// Starts the workers and waits for them. After the first failure the others get the timeout (plus
// a grace of 10 s) to stop on their own, which they do when their next collective fails, or 2 s
// once rank 0 has ended; whoever is left then is killed, so a hung worker cannot hold the launch.
LaunchOutcome launch_workers(const LaunchOptions& options);

// Reads the variables launch_workers sets; throws common::UsageError naming a missing or bad one.
env::RendezvousSpec rendezvous_from_environment();

}  // namespace env
