// BOA, the batch orchestration algorithm (Yang et al., J. Supercomputing 76(1), 2020), as this
// toolkit reads its abstract: per-worker performance models of batch time against batch size,
// fitted from measurements alone ("hardware-agnostic"), and a min-max integer programme for the
// mini-batch sizes (the same problem as LBB Eq. 3, so the same solver). BOA re-balances between
// epochs, not between iterations (LBB Sec. 2.2.2: such methods "require several epochs to
// rebalance"). So:
//   - before training: profile like LBB Alg. 1 but fit a linear model (BOA's model), solve;
//   - during an epoch: the split is fixed, every (B_i, t_i) each worker reports is kept;
//   - at the start of the next epoch: refit each worker's linear model from the last epoch's
//     points and solve again. Since the split was fixed, the points usually share one batch
//     size; then the model keeps its start-up time a0 and its slope is set through the epoch's
//     mean time, t = a0 + a1 B (as LBB's rough model, but averaged over an epoch, not one step).
//     With two or more batch sizes (the epoch's short last batch) it is a least-squares line.
#pragma once

#include <cstdint>
#include <vector>

#include "env/barrier_policy.hpp"
#include "env/sim/batch_time_model.hpp"
#include "lbb/min_max_solver.hpp"
#include "lbb/profiler.hpp"

namespace lbb {

struct BoaOptions {
  bool profiling = true;  // profile and solve before training; off: equal split for the first epoch
  ProfileOptions profile{5, 0.2, 1};  // repetitions, trim_fraction, fit_degree (1: linear)
};

class BoaPolicy final : public env::BarrierPolicy {
 public:
  explicit BoaPolicy(BoaOptions options = {});

  void start(const env::ClusterView& cluster) override;
  // At the first round of an epoch after one with measurements: refit and solve (see above).
  env::RoundPlan plan(const env::PlanContext& context) override;
  void observe_round(const env::RoundReport& report) override;

  const std::vector<int>& batch_sizes() const { return batch_sizes_; }
  const std::vector<env::BatchTimeModel>& models() const { return models_; }
  const std::vector<char>& known() const { return known_; }  // models_[i] has been fitted
  const BatchAllocation& last_allocation() const { return allocation_; }
  std::int64_t rebalances() const { return rebalances_; }  // solves after the first

 private:
  void rebalance();

  BoaOptions options_;
  int global_batch_ = 0;
  std::vector<int> max_batch_;
  std::vector<int> batch_sizes_;
  std::vector<env::BatchTimeModel> models_;
  std::vector<char> known_;
  std::vector<std::vector<env::BatchTimePoint>> epoch_points_;  // this epoch's (B_i, t_i) per worker
  BatchAllocation allocation_;
  std::int64_t rebalances_ = 0;
};

}  // namespace lbb
