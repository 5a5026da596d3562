// `orchestra balance FILE.json`: solve LBB Eq. 3 for performance models given by hand, JSON in
// and JSON out.
//
// Input:
//   {"global_batch": 512,
//    "workers": [{"name": "a", "model": [a0, a1, a2, a3], "max_batch": 300},
//                {"name": "b", "samples": [[2, 14.6], [4, 15.9], ...]}]}
// Each worker gives `model`, coefficients a0.. (ms, 1 to 4 of them, Eq. 1; a shorter list is a
// lower degree), or `samples`, profiled [batch, ms] points to which a cubic is fitted (at least
// two distinct batches; fewer points lower the degree), or both, as `orchestra profile` writes
// them: then the model is used as given and the samples are only checked. `max_batch` (B_lim) is
// optional: with samples it defaults to the largest profiled batch, for a model alone to
// global_batch. `name` is optional. Unknown keys are errors, so a misspelt key is not silently
// ignored.
//
// Output:
//   {"batch_sizes": [...], "predicted_ms": [...], "iteration_ms": ..., "straggler_effect": ...}
// predicted_ms is 0 for a worker taken out (B_i = 0); straggler_effect is Eq. 4 over the
// predicted times of the workers that take part.
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "env/sim/batch_time_model.hpp"

namespace lbb {

// Bad input to `orchestra balance`; the message names the file and the offending key, e.g.
// "m.json: workers[1].max_batch: expected a positive integer, got -3", or for broken JSON the
// byte (counted from 1), line and column: "m.json: invalid JSON at byte 35, line 1, column 35: ...".
struct BalanceInputError : common::DataError {
  using common::DataError::DataError;
};

struct BalanceWorker {
  std::string name;
  env::BatchTimeModel model;
  int max_batch = 0;
};

struct BalanceRequest {
  int global_batch = 0;
  std::vector<BalanceWorker> workers;
};

// Parses and validates the JSON text; `source` (the file name) starts every error message.
// Throws BalanceInputError.
BalanceRequest parse_balance_request(const std::string& text, const std::string& source);

// The output document for a request, pretty-printed JSON (2-space indent, trailing newline).
std::string solve_balance(const BalanceRequest& request);

// Reads `path`, solves and writes the output JSON to `out`. Returns 0 (the exit status); throws
// BalanceInputError for an unreadable file or bad input.
int run_balance(const std::string& path, std::ostream& out);

}  // namespace lbb
