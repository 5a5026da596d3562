// LBB as a barrier policy: profile every worker and solve Eq. 3 before training (Alg. 1), then
// after every iteration fine- or rapid-tune the local batch sizes from the measured compute times
// (Alg. 2). Synchronous SGD throughout: one local step, gradients all-reduced with weight B_i / B
// (Sec. 3.2.4, applied by the environment); the policy only chooses the B_i.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "env/barrier_policy.hpp"
#include "lbb/dynamic_tuner.hpp"
#include "lbb/min_max_solver.hpp"
#include "lbb/profiler.hpp"

namespace lbb {

struct LbbOptions {
  bool profiling = true;       // Alg. 1 before training; off: start from SSGD's equal split
  bool dynamic_tuning = true;  // Alg. 2 after every iteration; off: the first split is kept
  TunerOptions tuning;         // FT (0.05), RT (0.3), step (1), observation window (10)
  ProfileOptions profile;      // repetitions (5), trim_fraction (0.2), fit_degree (3, Eq. 1)
};

// Counts for the results: what the coordinator did over the run.
struct LbbStats {
  std::int64_t rounds_observed = 0;
  std::int64_t fine_tunes = 0;
  std::int64_t rapid_tunes = 0;
  std::int64_t skipped_rounds = 0;  // rounds whose batches were cut short (end of an epoch's data)
};

class LbbPolicy final : public env::BarrierPolicy {
 public:
  explicit LbbPolicy(LbbOptions options = {});

  // Profiles each worker with cluster.probe_step_ms at 2, 4, ... up to min(B_lim_i, B) (no
  // worker ever gets more than B, so larger probes would only cost time) and solves Eq. 3.
  // Throws std::invalid_argument for an inconsistent cluster or profiling without a probe.
  void start(const env::ClusterView& cluster) override;
  env::RoundPlan plan(const env::PlanContext& context) override;
  // Runs Alg. 2 on the round's measured compute times. A round whose reported batch sizes differ
  // from the plan (the last, short batch of an epoch) says nothing about the planned split and
  // is skipped.
  void observe_round(const env::RoundReport& report) override;

  const std::vector<int>& batch_sizes() const { return batch_sizes_; }
  const std::vector<WorkerProfile>& profiles() const { return profiles_; }  // empty without profiling
  const BatchAllocation& profiled_allocation() const { return profiled_; }  // Eq. 3 on the profiles
  const TuneResult& last_tune() const { return last_tune_; }
  const LbbStats& stats() const { return stats_; }

 private:
  LbbOptions options_;
  std::vector<int> batch_sizes_;
  std::vector<WorkerProfile> profiles_;
  BatchAllocation profiled_;
  std::optional<DynamicTuner> tuner_;
  TuneResult last_tune_;
  LbbStats stats_;
};

}  // namespace lbb
