// libFuzzer target: the `orchestra balance` JSON reader (lbb::parse_balance_request) and, for a
// request it accepts, the solver behind it (LBB Eq. 3). Bad input must be refused with
// lbb::BalanceInputError, which names the file and the key; anything else counts as a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lbb/balance_cli.hpp"

namespace {

// The solver's work grows with the global batch times the workers; larger requests are still
// parsed in full but not solved, so that one input stays within libFuzzer's per-input timeout.
constexpr int kMaxSolvedBatch = 1 << 14;
constexpr std::size_t kMaxSolvedWorkers = 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const lbb::BalanceRequest request = lbb::parse_balance_request(text, "fuzz.json");
    if (request.global_batch <= kMaxSolvedBatch && request.workers.size() <= kMaxSolvedWorkers) {
      const std::string out = lbb::solve_balance(request);
      (void)out;
    }
  } catch (const lbb::BalanceInputError&) {
  }
  return 0;
}
