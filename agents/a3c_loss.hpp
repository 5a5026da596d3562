// The A3C loss of one rollout (Mnih et al. 2016, Sec. 4 and Alg. S3), as a single scalar for the
// shared trunk:
//   L = policy + value_loss_coef * value - entropy_coef * entropy
//   policy  = -mean_i log pi(a_i|s_i) * A_i        (A_i held constant: no gradient into the critic)
//   value   =  mean_i (R_i - V(s_i))^2
//   entropy =  mean_i H(pi(.|s_i))                  (the bonus that keeps exploring, beta = 0.01)
#pragma once

#include <torch/torch.h>

#include <vector>

#include "agents/a3c_options.hpp"
#include "agents/actor_critic.hpp"

namespace agents {

struct A3cLoss {
  torch::Tensor total;  // scalar, differentiable
  double policy = 0;
  double value = 0;
  double entropy = 0;
};

// output: the network's forward over the rollout's observations; actions: indices 0..2; returns
// and advantages from n_step_targets. Throws std::invalid_argument for mismatched lengths.
A3cLoss a3c_loss(const ActorCriticOutput& output, const std::vector<int>& action_indices,
                 const std::vector<double>& returns, const std::vector<double>& advantages,
                 const A3cOptions& options);

// Rescales all gradients of `net` so that their global L2 norm is at most max_norm (0: no-op);
// returns the norm before clipping. Clipping the whole update, not each tensor, keeps its direction.
double clip_gradients(torch::nn::Module& net, double max_norm);

}  // namespace agents
