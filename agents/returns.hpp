// n-step returns with bootstrapping and advantages (Mnih et al. 2016, Alg. S3):
//   R <- 0 for a terminal s_t, V(s_t) otherwise;  for i = t-1 .. t_start:  R <- r_i + gamma R,
//   advantage_i = R_i - V(s_i).
// An A3C rollout never spans two episodes. It is bootstrapped from V of the state after its last
// step unless the episode ended there: at the target, or at the budget, which ends an episode of
// the barrier environment for good (orchestra/rl/local_sgd_barrier_env.hpp: a miss pays its
// penalty instead of a future).
//
// Generalized advantage estimation (Schulman et al. 2016, Eq. 16), for PPO's rollouts, which may
// span episodes: delta_i = r_i + gamma V(s_{i+1}) (1 - done_i) - V(s_i),
// A_i = delta_i + gamma lambda (1 - done_i) A_{i+1}, and the return target R_i = A_i + V(s_i).
#pragma once

#include <vector>

namespace agents {

struct NStepTargets {
  std::vector<double> returns;     // R_i, one per step
  std::vector<double> advantages;  // R_i - V(s_i)
};

// rewards[i], values[i] = V(s_i) for the rollout's steps; bootstrap_value = V(s_{t}) (0 when
// terminal). Throws std::invalid_argument for sizes that differ or gamma outside [0, 1].
NStepTargets n_step_targets(const std::vector<double>& rewards, const std::vector<double>& values,
                            double bootstrap_value, double gamma);

// dones[i]: the episode ended with step i (no value flows across); bootstrap_value = V of the state
// after the last step (ignored when that step ended an episode). Throws std::invalid_argument for
// sizes that differ, or gamma or lambda outside [0, 1].
NStepTargets gae_targets(const std::vector<double>& rewards, const std::vector<double>& values, const std::vector<bool>& dones,
                         double bootstrap_value, double gamma, double lambda);

}  // namespace agents
