// n-step returns with bootstrapping and advantages (Mnih et al. 2016, Alg. S3):
//   R <- 0 for a terminal s_t, V(s_t) otherwise;  for i = t-1 .. t_start:  R <- r_i + gamma R,
//   advantage_i = R_i - V(s_i).
// A rollout never spans two episodes. It is bootstrapped from V of the state after its last step
// unless that state is terminal (target reached): a truncated episode (epoch or time budget spent)
// still bootstraps, since the state had value; treating a time limit as terminal would teach the
// critic that the world ends at the budget.
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

}  // namespace agents
