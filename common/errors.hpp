// The toolkit's errors. Every error the user can cause or meet derives from common::Error, which
// carries the process exit code and a short kind ("config error"), so the command line has one
// catch that prints one readable line: "orchestra: config error: configs/x.yaml:12: seed: ...".
#pragma once

#include <stdexcept>
#include <string>

namespace common {

// 2: what the user gave was wrong (config, command line, input file); 1: a failure at run time.
enum class ExitCode : int { Failure = 1, BadInput = 2 };

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const char* kind, const std::string& message)
      : std::runtime_error(message), code_(code), kind_(kind) {}
  int exit_code() const { return static_cast<int>(code_); }
  const char* kind() const { return kind_; }  // printed before the message

 private:
  ExitCode code_;
  const char* kind_;
};

// A bad experiment or training config; the message starts with "file:line: key: ".
struct ConfigError : Error {
  explicit ConfigError(const std::string& m) : Error(ExitCode::BadInput, "config error", m) {}
};

// A missing, unreadable, truncated or malformed data or input file; the message names the file.
struct DataError : Error {
  explicit DataError(const std::string& m) : Error(ExitCode::BadInput, "data error", m) {}
};

// A wrong command line; main adds the subcommand's name.
struct UsageError : Error {
  explicit UsageError(const std::string& m) : Error(ExitCode::BadInput, "usage error", m) {}
};

// A plan that the cluster cannot carry out (wrong number of workers, batch over B_lim, ...): a
// bug in a policy, not in the user's input.
struct PlanError : Error {
  explicit PlanError(const std::string& m) : Error(ExitCode::Failure, "plan error", m) {}
};

// A collective or control message that failed or timed out (a dead or hung peer).
struct CommError : Error {
  explicit CommError(const std::string& m) : Error(ExitCode::Failure, "communication error", m) {}
};

// A peer that sent a message out of step or malformed.
struct ProtocolError : Error {
  explicit ProtocolError(const std::string& m) : Error(ExitCode::Failure, "protocol error", m) {}
};

// A results folder this run may not write: another run holds it (the lock), it holds another
// experiment's results, or it cannot be written at all. Said before any work is done.
struct FolderError : Error {
  FolderError(ExitCode code, const std::string& m) : Error(code, "results folder", m) {}
};

// A file that could not be written (a full disk, no permission): the message names the file.
struct WriteError : Error {
  explicit WriteError(const std::string& m) : Error(ExitCode::Failure, "write error", m) {}
};

// A number that must be finite is not (a clock that overflowed): the run stops rather than go on
// with it.
struct NumericError : Error {
  explicit NumericError(const std::string& m) : Error(ExitCode::Failure, "numeric error", m) {}
};

// gnuplot missing or failing.
struct PlotError : Error {
  explicit PlotError(const std::string& m) : Error(ExitCode::Failure, "plot error", m) {}
};

// The machine refused what a command needs: a process that cannot be started, a file that cannot
// be written, memory for not even the smallest batch, a library built without a feature (CURVE).
// Not the user's input; the message says what and why.
struct SystemError : Error {
  explicit SystemError(const std::string& m) : Error(ExitCode::Failure, "system error", m) {}
};

// A run that failed in another process of this command (a seed's run, rank 0 of a real run); the
// message says which, and where its own message is.
struct RunError : Error {
  explicit RunError(const std::string& m) : Error(ExitCode::Failure, "run error", m) {}
};

}  // namespace common
