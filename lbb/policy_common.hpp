// What the gradient all-reduce policies of this library (LBB, BOA, LB-BSP) share: checking the
// cluster they are given and turning batch sizes into a plan.
#pragma once

#include <string>
#include <vector>

#include "env/barrier_policy.hpp"
#include "env/round_plan.hpp"

namespace lbb {

// Throws std::invalid_argument naming `policy` when the cluster has no workers, a max_batch
// entry per worker is missing or negative, global_batch <= 0, or the max batches cannot hold it.
void validate_cluster(const env::ClusterView& cluster, const std::string& policy);

// One local step per worker, gradients all-reduced with weight B_i / B (LBB Sec. 3.2.4; the
// environment applies the weights).
env::RoundPlan allreduce_plan(const std::vector<int>& batch_sizes);

// Per-worker (batch actually used, compute time) of a round, in cluster order.
struct RoundMeasurements {
  std::vector<int> batch_sizes;
  std::vector<double> compute_ms;
};
RoundMeasurements measurements_of(const env::RoundReport& report);

}  // namespace lbb
