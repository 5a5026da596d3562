// The barrier-tuning RL environment of Orchestra Sec. 3.1.3 on the toolkit's local-SGD environment:
// BarrierEnv (barrier_env.hpp) implemented with env::LocalSgdEnv (real libtorch training on a
// simulated heterogeneous cluster) and orchestra::BarrierController (LCM start, tau_n = T / t_b^n,
// speed-proportional data partition, Eq. 2 averaging).
//
// An episode:
// - reset(seed) builds a fresh LocalSgdEnv whose replicas, data order and step-time noise all come
//   from `seed` (the datasets are loaded once, in the constructor, and shared by every episode) on
//   the config's cluster, or, with a cluster distribution, on a cluster drawn from `seed`
//   (cluster_distribution.hpp), and a fresh controller, started on it: it probes every worker's
//   batch time and sets T to the LCM heuristic's T* (3.1.1: "We obtain the preliminary
//   synchronization barrier through the Load Balancing Controller, and finally, input it to the
//   Barrier Controller for tuning"). The observation (rl_state.hpp) knows the cluster's times, T
//   and the planned tau_n; info.accuracy and info.loss hold the untrained model's test accuracy and
//   loss, the baseline of the first step's delta acc.
// - step(action) moves T by the action (BarrierController::move_barrier, additive or
//   multiplicative as the controller's options say; from then on T belongs to the agent), runs the
//   rounds of one decision window (an epoch, or K rounds: the controller's interval, cut short by
//   an epoch's end), evaluates the test accuracy (every step, or with eval_every_reference_rounds
//   only when that much simulated time has passed), and pays the reward:
//     Eq1: Orchestra's +1 / -1 / 0 (orchestra/reward.hpp) on p = (delta acc / time) sqrt(trainstep)
//          since the previous evaluation (0 on a step without one), against the best p on record: of this episode, or with `reward_record`
//          History the best of the same step in every earlier episode; 0 when there is no p* yet;
//     Time: minus the window's simulated time in units of time_reward_rounds reference rounds
//          (the controller's starting T* plus the modelled all-reduce: one round of the LCM
//          heuristic on this cluster), so an episode's undiscounted return is minus its time to
//          the target in those units, comparable across clusters whose rounds take 50 ms or 5 s.
//     LogTime: minus the growth of ln(c + the episode's time so far) over the window, with c
//          those same time_reward_rounds reference rounds, so that the undiscounted return is
//          -ln(1 + time to target / c). `orchestra evaluate` judges the geometric mean of time
//          ratios; with this reward a policy 20% slower loses ln 1.2 of return on any cluster,
//          where with Time it loses 20% of that cluster's time, so clusters with long episodes
//          outweigh the rest.
//     With move_cost_rounds > 0 (Time only), a step whose action changes T also pays that many
//     reference rounds: a switching cost, so that a policy moves T only where the move pays for
//     itself in time to target. Measured (BENCHMARKS.md, "A switching cost in training"): without
//     it most runs end in networks whose greedy move flips between doubling and halving from one
//     round to the next; at 0.5 a run stopped moving T altogether.
// - terminated: the test accuracy after the step reached budget.target_accuracy.
//   truncated: not terminated, and the episode has run budget.max_epochs epochs or its simulated
//   clock has passed budget.max_sim_seconds (the clock counts the probing at the start too). The
//   budget ends the episode for good (learners do not bootstrap past it), and with the Time reward
//   the truncating step also pays the episode's time once more: a miss counts as twice its time,
//   so that ending the budget fast at a barrier too large to learn never beats reaching the target
//   (with LogTime: ln 2 more, the log of twice its time).
// The evaluation after every step is the run loop's with eval_every_rounds equal to the window, so
// an episode's time to target is what `orchestra run` measures for the same controller.
//
// Training: real (env::LocalSgdEnv, libtorch replicas on the data set, loaded once by the
// constructor), or, with `surrogate` set, the surrogate of training (env::SurrogateEnv,
// env/surrogate/: the same timing simulation, the loss and accuracy from a fitted model, no data
// loaded, microseconds per round). The surrogate must have been fitted on this config's workload
// (data set, model, optimizer, global batch); the constructor checks it. Episodes, budgets, rewards
// and the state are the same either way.
//
// Timing-only mode (no gradients, no data) is rejected by the constructor: both rewards' target and
// Eq. 1's accuracy need test accuracy, and without it the trade-off T controls (fewer averages vs.
// staler replicas) is invisible: throughput alone only says "raise T".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "env/round_cluster.hpp"
#include "env/surrogate/surrogate_model.hpp"
#include "env/train/dataset.hpp"
#include "env/train/local_sgd_env.hpp"
#include "orchestra/barrier_controller.hpp"
#include "orchestra/barrier_env.hpp"
#include "orchestra/cluster_distribution.hpp"
#include "orchestra/reward.hpp"

namespace orchestra {

// When an episode ends (terminated at the target, truncated at a budget).
struct EpisodeBudget {
  int max_epochs = 10;             // truncate after this many epochs (>= 1)
  double max_sim_seconds = 0;      // and/or once the simulated clock passes this (0 = no limit)
  // and/or once the episode has run this many reference epochs of simulated time (0 = no limit):
  // the time an epoch takes at the starting T* (LCM's rounds per epoch times T* + C), a budget in
  // the cluster's own time scale for training over clusters whose epochs take 1 s or 10 min.
  double max_reference_epochs = 0;
  double target_accuracy = 0.85;   // terminate once the test accuracy reaches it, in (0, 1]
};

struct LocalSgdBarrierEnvConfig {
  env::ClusterSpec cluster;
  env::NetworkSpec network;        // network.message_bytes 0 = the trained model's size
  // When set, every reset(seed) draws the cluster and the network from it instead (the two fields
  // above are then unused).
  std::optional<ClusterDistribution> distribution;
  env::TrainingSpec training;      // model, optimizer, lr schedule; timing_only must be false
  env::DataSpec data;
  // Null: real training. Set: the surrogate of training in its place (see above).
  std::shared_ptr<const env::SurrogateModel> surrogate;
  int global_batch = 512;          // B; the controller's default B_n is B / N
  std::uint64_t data_seed = 1;     // seeds the data set (the synthetic one, a subset's order) once
  EpisodeBudget budget;
  // LCM / data-partition / action / decision-interval options. horizon_epochs 0 is replaced by
  // budget.max_epochs (the state's budget entry); source Fixed starts at fixed_barrier_ms instead.
  BarrierControllerOptions controller = BarrierControllerOptions::orchestra_lcm();
  // Eq. 1's "historical record" p* (orchestra/reward.hpp RecordScope): Episode starts every episode
  // without one; History keeps it across reset(), per step.
  RecordScope reward_record = RecordScope::Episode;
  enum class Reward { Eq1, Time, LogTime };
  Reward reward = Reward::Eq1;
  double time_reward_rounds = 10.0;  // Time: reference rounds per unit of reward; LogTime: c (> 0)
  double move_cost_rounds = 0;       // Time: reference rounds charged per change of T (>= 0; 0: none)
  // 0: evaluate after every step. > 0: only once this many reference rounds of simulated time have
  // passed since the last evaluation (and at every epoch's end and the budget's), so that an
  // episode at a tiny T (hundreds of short rounds) does not spend its wall time evaluating: the
  // target is then seen at most this late, which moves the time reward by at most as much.
  double eval_every_reference_rounds = 0;
  // Vectorized environments (batched_barrier_envs.hpp): this environment's local-SGD rounds run
  // merged with the other members' (env/train/step_batcher.hpp); none by default.
  env::StepBatching batching;
  // Exploring starts (Sutton & Barto, Sec. 5.3): each reset(seed) places T at LCM's T* times a
  // factor drawn log-uniformly from [lo, hi] (from the episode's seed), so that training sees the
  // returns of every region of T, also those a policy starting at T* would rarely reach. T*
  // stays the reference (bounds, rewards' units, the state's "T vs its start"), as in deployment,
  // which always starts at T*. [1, 1]: the paper's start.
  Range exploring_start{1.0, 1.0, true};
  // Focus clusters (Genet, Xia et al., SIGCOMM 2022: train more on the environments where the
  // policy trails a rule-based baseline the most): with a distribution, each reset(seed) draws its
  // cluster, with probability focus_share, from one of these draw seeds (picked uniformly) instead
  // of its own; both choices come from the episode's seed, and the rest of the episode (noise,
  // start) stays the episode's. `orchestra surrogate hardest` finds them. Empty: none.
  std::vector<std::uint64_t> focus_draws;
  double focus_share = 0;  // in [0, 1]; > 0 needs focus_draws
};

// The seed reset(seed) draws its cluster from (draw_cluster's), focus clusters included: one
// cluster per value, whatever episode draws it.
std::uint64_t cluster_draw_seed(const LocalSgdBarrierEnvConfig& config, std::uint64_t episode_seed);

class LocalSgdBarrierEnv final : public BarrierEnv {
 public:
  // Validates the config (std::invalid_argument naming the field) and loads the datasets, or uses
  // `data` when given (several environments, e.g. one per A3C agent, can share one copy); with a
  // surrogate no data is loaded (`data` is ignored).
  explicit LocalSgdBarrierEnv(LocalSgdBarrierEnvConfig config, std::shared_ptr<const env::DatasetPair> data = nullptr);

  ResetResult reset(std::uint64_t seed) override;
  // Throws std::invalid_argument for an action outside [-max_move, +max_move] (barrier_env.hpp) or
  // a step after the episode ended, std::logic_error before the first reset().
  StepResult step(int action) override;
  StepResult step(BarrierAction action) { return step(static_cast<int>(action)); }
  int observation_size() const override { return state_size(config_.controller.state_features); }
  int max_move() const override { return config_.controller.max_move; }

  bool episode_over() const { return over_; }
  const env::ClusterSpec& cluster() const { return cluster_; }  // this episode's (drawn) cluster
  const env::NetworkSpec& network() const { return network_; }
  const BarrierController& controller() const;  // std::logic_error before reset()
  const LocalSgdBarrierEnvConfig& config() const { return config_; }
  const std::shared_ptr<const env::DatasetPair>& data() const { return data_; }  // null on the surrogate
  const RewardResult& last_reward() const { return last_reward_; }  // details of the latest step's Eq. 1

 private:
  LocalSgdBarrierEnvConfig config_;
  std::shared_ptr<const env::DatasetPair> data_;
  std::int64_t train_samples_ = 0;  // of the data set, or of the surrogate's task
  std::unique_ptr<env::RoundCluster> env_;
  std::optional<BarrierController> controller_;
  RewardTracker reward_;
  RewardResult last_reward_;
  env::ClusterSpec cluster_;
  env::NetworkSpec network_;
  double reference_round_ms_ = 0;
  double reference_epoch_ms_ = 0;
  double episode_start_ms_ = 0;
  env::EvalResult last_eval_;
  double last_eval_ms_ = 0;
  std::int64_t trainsteps_ = 0;
  int epochs_ = 0;
  bool over_ = false;
};

}  // namespace orchestra
