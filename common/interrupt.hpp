#pragma once
// Ctrl-C (SIGINT) and SIGTERM (a scheduler's preemption, `kill`) as a request to stop, for a command
// that can end cleanly: `train` and `serve` write their checkpoint and say how to resume, where the
// default action killed them with up to a3c.checkpoint_every updates unsaved. The first signal only
// sets the flag the work polls; a second one takes the default action, for a process that is stuck.

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

}  // namespace common
