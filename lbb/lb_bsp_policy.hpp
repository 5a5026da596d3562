// LB-BSP, load-balanced bulk synchronous parallel (Chen et al., SoCC '18 poster; "Semi-dynamic
// load balancing", SoCC '20): worker-adaptive batch sizing at iteration boundaries. Before each
// iteration every worker's sample-processing speed is predicted and the global batch is split in
// proportion to it, so that all workers finish together; the split is integerized, kept within
// each worker's memory limit and sums to B.
//
// Predictor: the paper uses NARX, a recurrent network over past speeds plus exogenous resource
// signals (CPU, memory). The environment exposes no such signals, and NARX without them reduces
// to an autoregression over past speeds; this uses the simplest one, an exponential moving
// average of the measured speed B_i / t_i (samples per ms). With t = a0 + a1 B the proportional
// split is a fixed-point iteration whose fixed point has equal times, which is the balance
// LB-BSP aims at; the smoothing damps its oscillation under noise.
// Training starts from SSGD's equal split: LB-BSP has no profiling phase.
#pragma once

#include <vector>

#include "env/barrier_policy.hpp"

namespace lbb {

struct LbBspOptions {
  double smoothing = 0.5;  // EMA weight of the newest speed, in (0, 1]; 1 = last speed only
};

class LbBspPolicy final : public env::BarrierPolicy {
 public:
  // Throws std::invalid_argument for a smoothing outside (0, 1].
  explicit LbBspPolicy(LbBspOptions options = {});

  void start(const env::ClusterView& cluster) override;
  env::RoundPlan plan(const env::PlanContext& context) override;
  // Updates the predicted speeds from the round's (batch, compute time) and re-splits B.
  void observe_round(const env::RoundReport& report) override;

  const std::vector<int>& batch_sizes() const { return batch_sizes_; }
  // Samples per ms; NaN for a worker not measured yet.
  const std::vector<double>& predicted_speeds() const { return speeds_; }

 private:
  LbBspOptions options_;
  int global_batch_ = 0;
  std::vector<int> max_batch_;
  std::vector<int> batch_sizes_;
  std::vector<double> speeds_;
};

}  // namespace lbb
