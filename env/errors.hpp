// The toolkit's error hierarchy: each says what was expected and what was found, so the command
// line can print one readable line and exit non-zero (STYLE.md "Configuration and errors").
#pragma once

#include <stdexcept>
#include <string>

namespace env {

// A bad experiment config; the message starts with "file:line: key: ".
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A missing, unreadable, truncated or malformed data file; the message names the file.
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A plan that the environment cannot carry out (wrong number of workers, batch over B_lim, ...).
struct PlanError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

}  // namespace env
