// One A3C agent's learning step without any transport (Mnih et al. 2016, Alg. S3 lines 5-20): run
// the current policy for up to t_max steps or to the end of the episode, then turn the rollout into
// a gradient of the A3C loss. The agent process (agent_worker) wraps this with the parameter server.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "agents/a3c_loss.hpp"
#include "agents/actor_critic.hpp"
#include "agents/returns.hpp"
#include "orchestra/barrier_env.hpp"

namespace agents {

// One finished episode, as train.csv averages it.
struct EpisodeStats {
  double total_reward = 0;
  int epochs = 0;
  bool reached_target = false;
  double time_to_target_ms = std::numeric_limits<double>::quiet_NaN();  // clock at the target
  double clock_ms = 0;                                                  // clock at the end
};

// Adds one step's reward and info to the running episode's statistics.
void add_step(EpisodeStats& stats, double reward, const orchestra::StepInfo& info);

struct Rollout {
  std::vector<std::vector<float>> observations;  // s_i
  std::vector<int> action_indices;               // a_i as network output index (0: -1, 1: 0, 2: +1)
  std::vector<double> rewards;                   // r_i
  std::vector<float> next_observation;           // s_t, the state after the last step
  bool terminated = false;                       // the episode ended (target or budget): bootstrap from 0
  std::vector<EpisodeStats> finished;            // episodes that ended in this rollout (0 or 1)
};

// PPO's rollout: a number of environment steps from where the runner stands, across episodes, with
// what the collecting policy said about each (its log-probability of the action taken, its value).
struct PpoRollout {
  std::vector<std::vector<float>> observations;
  std::vector<int> action_indices;
  std::vector<double> old_log_probs;  // log pi_old(a_i|s_i)
  std::vector<double> values;         // V_old(s_i)
  std::vector<double> rewards;
  std::vector<bool> dones;            // step i ended its episode
  std::vector<float> next_observation;
  std::vector<EpisodeStats> finished;
};

struct GradientResult {
  std::vector<float> gradient;  // flat, in parameter order (actor_critic.hpp)
  double policy_loss = 0;
  double value_loss = 0;
  double entropy = 0;
  double norm_before_clip = 0;
};

// Runs episodes on one environment. Episode k is reset with seed splitmix(base_seed + k), so one
// base seed fixes every episode this runner will play.
class RolloutRunner {
 public:
  RolloutRunner(orchestra::BarrierEnv& env, std::uint64_t base_seed, std::uint64_t first_episode = 0);
  // Up to n_steps steps with actions sampled from pi(.|s; net) using `rng`; stops early at the end
  // of an episode (a rollout never spans two). Starts a new episode first if none is running.
  Rollout collect(ActorCritic& net, int n_steps, std::mt19937_64& rng);
  // PPO: exactly `steps` steps, starting new episodes as they end.
  PpoRollout collect_steps(ActorCritic& net, int steps, std::mt19937_64& rng);
  std::uint64_t episodes_started() const { return episode_; }
  std::int64_t steps() const { return steps_; }

 private:
  struct Taken {
    std::vector<float> observation;  // s_i
    int action_index = 0;
    double log_prob = 0;
    double value = 0;
    orchestra::StepResult step;
    bool episode_over = false;
  };
  // One step of the current episode (started first if none runs), sampled from pi(.|s; net).
  Taken take_step(ActorCritic& net, std::mt19937_64& rng, std::vector<EpisodeStats>& finished);

  orchestra::BarrierEnv& env_;
  std::uint64_t base_seed_;
  std::uint64_t episode_;
  bool running_ = false;
  std::vector<float> observation_;
  EpisodeStats current_;
  std::int64_t steps_ = 0;
};

// The A3C gradient of one rollout: forward over the states, n-step targets bootstrapped from
// V(next_observation) unless terminal, loss, backward, global-norm clip. Leaves the gradients in
// `net` as well.
GradientResult rollout_gradient(ActorCritic& net, const Rollout& rollout, const A3cOptions& options);

// PPO's targets for a rollout: GAE (returns.hpp) from the recorded values, bootstrapped from
// V(next_observation) under `net`, advantages then normalized to mean 0 and sd 1 over the rollout.
NStepTargets ppo_targets(ActorCritic& net, const PpoRollout& rollout, const A3cOptions& options);
// In place: mean 0 and sd 1 (+1e-8) over the samples.
void normalize_advantages(std::vector<double>& advantages);

// The gradient of the PPO loss (ppo_loss.hpp) on the rollout's samples `indices`, clipped like
// rollout_gradient's. Leaves the gradients in `net` as well.
GradientResult ppo_gradient(ActorCritic& net, const PpoRollout& rollout, const NStepTargets& targets,
                            const std::vector<std::size_t>& indices, const A3cOptions& options);

// SplitMix64 (Steele et al. 2014): decorrelates seeds that differ by one (common/splitmix64.hpp).
std::uint64_t splitmix64(std::uint64_t x);

}  // namespace agents
