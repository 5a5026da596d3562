// `orchestra run`'s cluster: the simulated one of the config (env::LocalSgdEnv: the cost model's
// clock, real training behind it), one per policy, each from the same seed and data.
#pragma once

#include <memory>

#include "env/train/dataset.hpp"
#include "experiments/results/policy_outcome.hpp"
#include "experiments/runner/experiment.hpp"

namespace experiments {

// Throws common::ConfigError when `config` is a real cluster's (cluster.mode: real runs on
// processes: orchestra launch, real_run.hpp). `orchestra run` checks it first, before the
// policies are built, so a real config is answered with where it runs.
void check_simulated_config(const ExperimentConfig& config);

// One policy's run on the config's simulated cluster, from config.seed: libtorch training on `data`
// (null for a timing-only config), or the surrogate of training (runtime.training: surrogate; no
// data). What SimulatedCluster::run writes, and what a barrier planned on the surrogate runs
// (experiments/surrogate/barrier_planner.hpp) without writing anything.
PolicyOutcome run_simulated_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy,
                                   const std::shared_ptr<const env::DatasetPair>& data, Progress& progress);

class SimulatedCluster : public ExperimentCluster {
 public:
  // Refuses a real-mode config (check_simulated_config); checks the device; starts every policy once on a timing-only copy
  // of the cluster, so that a policy that cannot run there (a batch over a worker's memory, ...)
  // is reported before any training or any file; loads the data (unless timing-only).
  void prepare(Experiment& experiment) override;
  bool writes_results() const override { return true; }
  void run(const Experiment& experiment, ExperimentPolicy& policy, Progress& progress, ResultsWriter& writer) override;

 private:
  std::shared_ptr<const env::DatasetPair> data_;  // null for timing-only runs
};

}  // namespace experiments
