// Fitting what a real round costs besides compute and the all-reduce (env::RoundOverhead): the
// plan broadcast and the gathering of the workers' times, the optimizer step, each step's data
// loading, and the run loop's own work between rounds. None of these is in a worker's measured
// compute or in the all-reduce time, yet all are on the real wall clock.
//
// Per round, overhead = round_ms - comm_ms - the largest compute_ms (the slowest worker's local
// steps, which set when the barrier opens), regressed by least squares on that worker's local
// steps: overhead = fixed_ms + per_step_ms * steps. When every round has the same number of steps
// (DSGD alone) the two cannot be told apart and all of it is fixed_ms. The gap between one
// round's end and the next one's start (clock - round_ms - previous clock) adds its median to
// fixed_ms: the median, because the gaps before a round that follows profiling (LBB Alg. 1,
// Orchestra's probes) hold the probes, which the simulator charges itself.
#pragma once

#include <cstddef>
#include <vector>

#include "env/sim/cluster.hpp"

namespace experiments::calibration {

struct MeasuredRound {
  double round_ms = 0;
  double comm_ms = 0;
  double slowest_compute_ms = 0;  // the largest compute_ms of the round
  int slowest_steps = 0;          // that worker's local steps
  double gap_before_ms = -1;      // time since the previous round's end (< 0: first round of a run)
};

struct OverheadFit {
  env::RoundOverhead overhead;
  double round_fixed_ms = 0;  // the regression's intercept (fixed_ms without the gap)
  double median_gap_ms = 0;   // the median gap between rounds (added to fixed_ms)
  std::size_t rounds = 0;
  double rms_ms = 0;  // residuals of the regression
};

// Throws common::DataError when there is no round.
OverheadFit fit_overhead(const std::vector<MeasuredRound>& rounds);

}  // namespace experiments::calibration
