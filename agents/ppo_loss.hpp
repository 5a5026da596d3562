// The PPO loss of a minibatch (Schulman et al. 2017, "Proximal Policy Optimization Algorithms",
// Eq. 7 and 9), on the same actor-critic network as A3C:
//   L = policy + value_loss_coef * value - entropy_coef * entropy
//   policy  = -mean_i min(rho_i A_i, clip(rho_i, 1 - eps, 1 + eps) A_i),  rho_i = pi(a_i|s_i) / pi_old(a_i|s_i)
//   value   =  mean_i (R_i - V(s_i))^2
//   entropy =  mean_i H(pi(.|s_i))
// The clip keeps each of the several passes over one rollout from moving the policy far from the
// one that collected it.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "agents/a3c_options.hpp"
#include "agents/actor_critic.hpp"

namespace agents {

struct PpoLoss {
  torch::Tensor total;  // scalar, differentiable
  double policy = 0;
  double value = 0;
  double entropy = 0;
  double clip_fraction = 0;  // share of samples whose ratio was clipped
};

// output: the network's forward over the minibatch's observations; the other vectors one entry per
// sample. Throws std::invalid_argument for mismatched lengths.
PpoLoss ppo_loss(const ActorCriticOutput& output, const std::vector<int>& action_indices, const std::vector<double>& old_log_probs,
                 const std::vector<double>& advantages, const std::vector<double>& returns, const A3cOptions& options);

}  // namespace agents
