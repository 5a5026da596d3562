// "A cluster that runs rounds": what the one run loop (experiments/runner/run_loop.hpp) drives.
// The simulated cluster (env/train LocalSgdEnv: modelled clock, real training) and rank 0 of a
// real multi-process run (env/real RealCluster: wall clock, measured times) both implement it, so
// a simulated and a real run of one config go through exactly the same accounting.
#pragma once

#include <cstdint>
#include <functional>

#include "env/barrier_policy.hpp"
#include "env/round_plan.hpp"

namespace env {

// What a run's clock measures: the cost model's time, or wall time spent training.
enum class ClockKind { Simulated, Wall };

inline const char* clock_name(ClockKind kind) { return kind == ClockKind::Wall ? "wall" : "sim"; }

class RoundCluster {
 public:
  virtual ~RoundCluster() = default;

  virtual ClockKind clock_kind() const = 0;
  // What the policy may know before the first round (BarrierPolicy::start).
  virtual ClusterView view() = 0;
  // Runs one round of `plan`, opening a new epoch first when none is open. Throws
  // common::PlanError for a plan the cluster cannot run.
  virtual RoundReport run_round(const RoundPlan& plan) = 0;
  // After a round whose report has epoch_end: the epoch's totals and the global model's test
  // accuracy and loss (NaN when timing-only). Evaluation is off the clock.
  virtual EpochReport finish_epoch() = 0;
  // The global model's test accuracy and loss now, off the clock (NaN when timing-only).
  virtual EvalResult evaluate() = 0;

  virtual bool in_epoch() const = 0;   // false before an epoch's first round
  virtual int epoch() const = 0;       // the epoch being run (epochs finished so far)
  virtual std::int64_t rounds() const = 0;
  virtual double clock_ms() const = 0;
  virtual double epoch_progress() const = 0;  // fraction of this epoch's samples used

  // Runs `work` (results, checkpoints) without charging it to the clock; a simulated clock only
  // moves in rounds, so the default just runs it.
  virtual void off_the_clock(const std::function<void()>& work) { work(); }
};

}  // namespace env
