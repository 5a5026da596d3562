// K barrier-tuning environments whose training runs as one (vectorized environments, as EnvPool and
// Gymnasium's vector API do): one GPU idles on one small environment, so the K episodes'
// local-SGD rounds run merged into one stacked computation (env/train/step_batcher.hpp), each
// episode in its own thread for the rest (its clock, controller, averaging, evaluation). On the
// CPU it works the same and gives the same results up to floating-point reassociation; its
// purpose is the GPU. It is the real environment's batched step: a vector-environment interface
// with auto-reset and per-env seed streams (as a learner wants it) wraps it by resetting the
// environments whose episode ended after each step().
//
// The K environments share one data set (loaded once) and one model; each has its own episode,
// seed, cluster (drawn per episode from a distribution, as LocalSgdBarrierEnv does) and budget.
// The same seeds and actions give the same results, whatever the threads' timing: every merge
// holds each running episode's next round, in environment order.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "env/train/step_batcher.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"

namespace orchestra {

class BatchedBarrierEnvs {
 public:
  // `count` environments of `config` (config.batching is replaced by this vector's own batcher);
  // `data` as LocalSgdBarrierEnv takes it (loaded once here when null).
  BatchedBarrierEnvs(LocalSgdBarrierEnvConfig config, int count, std::shared_ptr<const env::DatasetPair> data = nullptr);

  int size() const { return static_cast<int>(envs_.size()); }
  // Environment k's new episode, on the calling thread (model initialization draws from libtorch's
  // process-wide generator, so resets are never concurrent).
  ResetResult reset(int k, std::uint64_t seed);
  std::vector<ResetResult> reset(const std::vector<std::uint64_t>& seeds);  // one seed per environment
  // One step of every environment, actions[k] for environment k, all at once; each must have an
  // episode running (reset the ones that ended). Rethrows the first environment's error (by k)
  // after every thread has finished.
  std::vector<StepResult> step(const std::vector<int>& actions);

  bool episode_over(int k) const { return envs_.at(static_cast<std::size_t>(k))->episode_over(); }
  LocalSgdBarrierEnv& env(int k) { return *envs_.at(static_cast<std::size_t>(k)); }
  const env::StepBatcher& batcher() const { return *batcher_; }
  int observation_size() const { return envs_.front()->observation_size(); }

 private:
  std::shared_ptr<env::StepBatcher> batcher_;
  std::vector<std::unique_ptr<LocalSgdBarrierEnv>> envs_;
};

}  // namespace orchestra
