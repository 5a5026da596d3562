// The `orchestra` subcommands. Each takes its arguments (after the subcommand name) and returns
// the exit status; bad input throws, and main prints one line and exits non-zero.
#pragma once

#include <string>
#include <vector>

namespace experiments {

using Args = std::vector<std::string>;

int command_run(const Args& args);

// Thrown for a wrong command line; main prints the message and the subcommand's usage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace experiments
