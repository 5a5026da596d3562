// The one run loop: a policy on a cluster that runs rounds (env/round_cluster.hpp), simulated or
// real, with the same budgets, periodic evaluation, time to target, epoch totals, run totals and
// checkpoints, so that a simulated and a real run of one config are accounted for identically.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "env/barrier_policy.hpp"
#include "env/round_cluster.hpp"
#include "env/train/dataset.hpp"
#include "experiments/config/config.hpp"
#include "experiments/results/policy_outcome.hpp"
#include "experiments/runner/progress.hpp"

namespace experiments {

// Run-level sums that PolicyOutcome does not keep but the final summary needs.
struct RunTotals {
  double straggler_sum = 0;  // over rounds
  double busy_ms = 0;        // over rounds and workers
};

// Everything needed to write a run's results after an epoch, and to resume it from there.
struct RunCheckpoint {
  bool finished = false;     // the policy's run is complete: resume skips it
  int epochs_done = 0;
  std::int64_t rounds = 0;
  double clock_ms = 0;       // the run's clock at the end of the last finished epoch
  PolicyOutcome outcome;     // the results up to then
  RunTotals totals;
};

// Called after every finished epoch, off the clock.
using EpochCallback = std::function<void(const RunCheckpoint&)>;

// Trains with `policy` on `cluster` until the budget is spent. `resume` (a real run cut off)
// continues the outcome and totals it holds; the cluster must have been set up at the same point.
PolicyOutcome run_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy,
                         env::RoundCluster& cluster, Progress& progress, const std::optional<RunCheckpoint>& resume = std::nullopt,
                         const EpochCallback& after_epoch = {});

}  // namespace experiments
