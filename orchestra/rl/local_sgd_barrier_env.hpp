// The barrier-tuning RL environment of Orchestra Sec. 3.1.3 on the toolkit's local-SGD environment:
// BarrierEnv (barrier_env.hpp) implemented with env::LocalSgdEnv (real libtorch training on a
// simulated heterogeneous cluster) and orchestra::BarrierController (LCM start, tau_n = T / t_b^n,
// speed-proportional data partition, Eq. 2 averaging).
//
// An episode:
// - reset(seed) builds a fresh LocalSgdEnv whose replicas, data order and step-time noise all come
//   from `seed` (the datasets are loaded once, in the constructor, and shared by every episode), and
//   a fresh controller, started on it: it probes every worker's batch time and sets T to the LCM
//   heuristic's T* (3.1.1: "We obtain the preliminary synchronization barrier through the Load
//   Balancing Controller, and finally, input it to the Barrier Controller for tuning").
//   The observation before any epoch (rl_state.hpp layout): every epoch entry (progress, sync index
//   and rate, accuracy and its change, losses, waiting, communication share) is 0; what is known is
//   the barrier (entry 10), the slot resolution (11) and, per worker slot, "present", the planned
//   tau_n at T* and the relative speed from the probes. info.accuracy and info.loss hold the
//   untrained model's test accuracy and loss, the baseline of the first epoch's delta acc.
// - step(action) moves T by the action (BarrierController::move_barrier: from then on T belongs to
//   the agent, the heuristic does not reset it), runs one whole epoch (rounds until the epoch's data
//   is used up, each one fed to the controller), evaluates, and pays the Eq. 1 reward
//   (orchestra/reward.hpp: +1 / -1 / 0 against the best increment rate p* on record: by default the
//   best of this episode, or with `reward_record` History the best of the same epoch in every
//   earlier episode; 0 when there is no p* yet), or minus the epoch's time with `reward` EpochTime.
// - terminated: the test accuracy after the epoch reached budget.target_accuracy.
//   truncated: not terminated, and the episode has run budget.max_epochs epochs or its simulated
//   clock has passed budget.max_sim_seconds. A step is always a whole epoch, so the epoch that
//   crosses the time budget is finished (its reward needs an end-of-epoch accuracy); the clock
//   counts the probing at the start too.
//
// Timing-only mode (no gradients, no data) is rejected by the constructor: the Eq. 1 reward and the
// target-accuracy termination both need test accuracy, and without it the trade-off T controls
// (fewer averages vs. staler replicas) is invisible — throughput alone only says "raise T". Timing
// studies of a given T belong to the fixed-t and orchestra-lcm policies, which do run timing-only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "env/train/dataset.hpp"
#include "env/train/local_sgd_env.hpp"
#include "orchestra/barrier_controller.hpp"
#include "orchestra/barrier_env.hpp"
#include "orchestra/reward.hpp"

namespace orchestra {

// When an episode ends (terminated at the target, truncated at a budget).
struct EpisodeBudget {
  int max_epochs = 10;             // truncate after this many epochs (>= 1)
  double max_sim_seconds = 0;      // and/or once the simulated clock passes this (0 = no limit)
  double target_accuracy = 0.85;   // terminate once the test accuracy reaches it, in (0, 1]
};

struct LocalSgdBarrierEnvConfig {
  env::ClusterSpec cluster;
  env::NetworkSpec network;        // network.message_bytes 0 = the trained model's size
  env::TrainingSpec training;      // model, optimizer, lr schedule; timing_only must be false
  env::DataSpec data;
  int global_batch = 512;          // B; the controller's default B_n is B / N
  std::uint64_t data_seed = 1;     // seeds the data set (the synthetic one, a subset's order) once
  EpisodeBudget budget;
  // LCM / data-partition / action-unit options. horizon_epochs 0 is replaced by budget.max_epochs
  // (the state's progress entry); source Fixed starts every episode at fixed_barrier_ms instead.
  BarrierControllerOptions controller = BarrierControllerOptions::orchestra_lcm();
  // Eq. 1's "historical record" p* (orchestra/reward.hpp RecordScope): Episode starts every episode
  // without one; History keeps it across reset(), per epoch.
  RecordScope reward_record = RecordScope::Episode;
  // What step() pays. Eq1: Orchestra's +1 / -1 / 0 (above). EpochTime: minus the epoch's simulated
  // seconds over time_reward_scale_s, so an episode's undiscounted return is minus its time to the
  // target (or to the budget) in those units: what the policy comparison measures. Eq. 1's sign
  // carries too little for short episodes (configs/a3c_train.yaml says what was measured).
  enum class Reward { Eq1, EpochTime };
  Reward reward = Reward::Eq1;
  double time_reward_scale_s = 10.0;
};

class LocalSgdBarrierEnv final : public BarrierEnv {
 public:
  // Validates the config (std::invalid_argument naming the field) and loads the datasets, or uses
  // `data` when given (several environments, e.g. one per A3C agent, can share one copy).
  explicit LocalSgdBarrierEnv(LocalSgdBarrierEnvConfig config, std::shared_ptr<const env::DatasetPair> data = nullptr);

  ResetResult reset(std::uint64_t seed) override;
  // Throws std::invalid_argument for an action outside {-1, 0, +1} (see BarrierAction) or a step
  // after the episode ended, std::logic_error before the first reset().
  StepResult step(int action) override;
  StepResult step(BarrierAction action) { return step(static_cast<int>(action)); }
  int observation_size() const override { return StateLayout::kStateSize; }

  bool episode_over() const { return over_; }
  const BarrierController& controller() const;  // std::logic_error before reset()
  const LocalSgdBarrierEnvConfig& config() const { return config_; }
  const std::shared_ptr<const env::DatasetPair>& data() const { return data_; }
  const RewardResult& last_reward() const { return last_reward_; }  // details of the latest step's Eq. 1

 private:
  LocalSgdBarrierEnvConfig config_;
  std::shared_ptr<const env::DatasetPair> data_;
  std::unique_ptr<env::LocalSgdEnv> env_;
  std::optional<BarrierController> controller_;
  RewardTracker reward_;
  RewardResult last_reward_;
  int epochs_ = 0;
  bool over_ = false;
};

}  // namespace orchestra
