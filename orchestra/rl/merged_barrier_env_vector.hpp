// K real barrier-tuning environments behind the learners' vector interface
// (orchestra/vector_barrier_env.hpp), their local-SGD rounds merged into one stacked computation
// (batched_barrier_envs.hpp): what `orchestra train` runs with a3c.envs_per_agent K and
// `merge_episodes: true`. Auto-reset and the per-environment episode streams are
// BarrierEnvVector's, so environment j plays the same episodes (same seeds, same clusters) as
// without merging; the training agrees with the unmerged one up to floating-point reassociation
// (the stacked products sum in another order), the clock and the rewards' time exactly.
#pragma once

#include <memory>
#include <vector>

#include "orchestra/rl/batched_barrier_envs.hpp"
#include "orchestra/vector_barrier_env.hpp"

namespace orchestra {

class MergedBarrierEnvVector final : public BarrierEnvVector {
 public:
  // Takes the K environments (std::invalid_argument when null).
  explicit MergedBarrierEnvVector(std::unique_ptr<BatchedBarrierEnvs> envs);

 private:
  std::vector<StepResult> step_envs(const std::vector<int>& actions) override { return envs_->step(actions); }
  // The K environments' addresses, for the base class (which borrows them).
  static std::vector<BarrierEnv*> borrowed(BatchedBarrierEnvs* envs);

  std::unique_ptr<BatchedBarrierEnvs> envs_;
};

}  // namespace orchestra
