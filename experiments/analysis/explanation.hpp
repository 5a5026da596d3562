// The two lines printed after a run's comparison table (`orchestra run`, `orchestra compare`, and
// the HTML report): who reaches the target first and by how much, then why, in the costs the
// policies trade (idle time at the barrier, communication). Computed from the results alone, so
// they stay true whatever wins, a timing-only run and a run where nothing reaches the target
// included.
#pragma once

#include <string>

#include "experiments/analysis/seed_stats.hpp"
#include "experiments/results/results_reader.hpp"

namespace experiments {

struct Explanation {
  // "orchestra-lcm reaches 85.0% first, in 41.2 s: 2.90x faster than dsgd (119.5 s)."
  std::string result;
  // "Why: orchestra-lcm's workers compute 40% of the time (dsgd: 15%), are idle 2% (27%) and
  // communicate 55% (58%); lbb is less idle (0%) but communicates 87%; local-sgd communicates less
  // (15%) but is idle 55%." The comparison is with the reference, or with the runner-up when the
  // reference wins; then the policy best on each cost where it beats the winner.
  std::string why;
};

// One run's policies (at least one). Reads each policy's rounds.csv for its communication time.
Explanation explain_run(const RunResults& run);

// The line a multi-seed run gets instead: which policy reaches the target soonest on average
// among those that reach it in every seed, with its CI and paired speedup; or that none does.
std::string explain_seeds(const std::vector<SeedRow>& rows);

}  // namespace experiments
