// `orchestra balance FILE.json`: LBB Eq. 3 for performance models given by hand or profiled
// (lbb/balance_cli.hpp has the formats).
#include <iostream>
#include <string>

#include "common/errors.hpp"
#include "experiments/cli/commands.hpp"
#include "lbb/balance_cli.hpp"

namespace experiments {

namespace {

const char* kBalanceHelp = R"(usage: orchestra balance FILE.json

Splits a global batch B among workers so that the slowest one finishes as early as possible
(LBB Eq. 3): integer B_i with 0 <= B_i <= max_batch_i and sum B_i = B; B_i = 0 takes a worker out.

Input (JSON): global_batch and, per worker, either "model" (coefficients a0..a3 in ms of
t(B) = a0 + a1 B + a2 B^2 + a3 B^3; a shorter list is a lower degree) or "samples" (profiled
[batch, ms] points, fitted with a cubic), and an optional "max_batch" (memory limit; default:
the largest profiled batch, or global_batch for a model). `orchestra profile` writes this form
(with both: the fitted model is used, the samples are kept for the record). The bounds are a
config's: batches up to 2^24, times up to 10^7 ms; a model given alone must not fall up to
max_batch (a fitted one may: it is read as its running maximum).

Output (JSON, stdout): batch_sizes, predicted_ms (per worker), iteration_ms (the slowest),
straggler_effect (LBB Eq. 4 over the predicted times).

example:
  cat > models.json <<'EOF'
  {"global_batch": 512,
   "workers": [{"name": "gtx1070", "model": [5.89, 0.5931], "max_batch": 1024},
               {"name": "gtx750", "model": [50.98, 2.6714], "max_batch": 256},
               {"name": "m40", "samples": [[2, 9.5], [64, 46.8], [256, 162.5], [512, 316.7]]}]}
  EOF
  orchestra balance models.json
)";

}  // namespace

int command_balance(const Args& args) {
  std::string path;
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << kBalanceHelp;
      return 0;
    }
    if (!a.empty() && a[0] == '-') throw UsageError("unknown option " + a);
    if (!path.empty()) throw UsageError("one file at a time (got " + path + " and " + a + ")");
    path = a;
  }
  if (path.empty()) throw UsageError("needs a FILE.json");
  try {
    return lbb::run_balance(path, std::cout);
  } catch (const lbb::BalanceInputError& e) {
    // A bad input file, like a bad dataset file: main prints "orchestra: data error: <file>: <key>:
    // ..." and exits 2. The message is kept to one line whatever the input held.
    std::string line = e.what();
    for (char& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    throw common::DataError(line);
  }
}

}  // namespace experiments
