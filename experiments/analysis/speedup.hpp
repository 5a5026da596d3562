// The speedup the comparison tables report, one rule for `orchestra run` and `orchestra compare`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace experiments {

// What a speedup is computed from, for one policy's run.
struct SpeedupBasis {
  std::optional<double> time_to_target_s;  // empty: the target was missed
  bool timing_only = false;                // no gradients, so no accuracy (training.timing_only)
  double epochs_time_s = 0;                // the clock when its last whole epoch ended
  std::int64_t epochs = 0;                 // its whole epochs
};

// With accuracy: the reference's simulated time to the target accuracy over the run's (the
// comparison of Orchestra Fig. 3); empty when either missed the target. Timing-only runs have no
// accuracy, so two of them compare simulated time per whole epoch: the same samples in less time.
// Empty when only one of the two is timing-only.
std::optional<double> speedup_over(const SpeedupBasis& reference, const SpeedupBasis& run);

// The policy a run's speedups are measured against, given the kinds of its policies in run order:
// the first `dsgd` (the synchronous baseline of both papers) if there is one, else the first
// policy. `orchestra run`, `orchestra launch` and `orchestra compare` all use this rule.
std::size_t speedup_reference_index(const std::vector<std::string>& kinds);

}  // namespace experiments
