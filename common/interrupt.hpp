#pragma once
// Ctrl-C (SIGINT) and SIGTERM (a scheduler's preemption, `kill`) as a request to stop, for a command
// that can end cleanly: `train` and `serve` write their checkpoint and say how to resume, where the
// default action killed them with up to a3c.checkpoint_every updates unsaved. The first signal only
// sets the flag the work polls; a second one takes the default action, for a process that is stuck.

#include <string>

#include "common/errors.hpp"

namespace common {

class InterruptRequest {
 public:
  InterruptRequest();   // catches SIGINT and SIGTERM until destroyed; one at a time in a process
  ~InterruptRequest();  // the earlier handlers again
  InterruptRequest(const InterruptRequest&) = delete;
  InterruptRequest& operator=(const InterruptRequest&) = delete;

  bool requested() const { return signal() != 0; }
  int signal() const;  // the signal that asked (SIGINT, SIGTERM), 0 while none has
};

// "SIGINT", "SIGTERM", or "a signal".
const char* signal_name(int signal);

// A request from a run's caller to stop it: orchestra.run in Python, whose interpreter takes the
// Ctrl-C and cannot deliver it into the C++ loop (a run held the user's Ctrl-C for hours). The run
// loop checks it after every round and throws RunStopped; what is written stays whole (each
// policy's folder appears whole or not at all). One flag per process, as one run at a time.
void request_run_stop();
void clear_run_stop();
bool run_stop_requested();

struct RunStopped : Error {
  explicit RunStopped(const std::string& m) : Error(ExitCode::Failure, "stopped", m) {}
};

}  // namespace common
