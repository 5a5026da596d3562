// The A3C gradient of several rollouts at once, for a vectorized agent's one push: the sum over
// rollouts of each one's A3C gradient (rollout_gradient's loss: means over its own steps), as
// Alg. S3 accumulates d(theta) over an agent's experience before one asynchronous update (Mnih et
// al. 2016, lines 15-20), then one global-norm clip of that sum to max_grad_norm. Computed with one
// forward and one backward over every rollout's states stacked, instead of one per rollout:
//   L = sum_k [ -mean_{i in k} log pi(a_i|s_i) A_i + c_v mean_{i in k} (R_i - V(s_i))^2
//               - beta mean_{i in k} H(pi(.|s_i)) ]
// with R_i, A_i the n-step targets of rollout k (returns.hpp), bootstrapped from V of its
// next_observation unless it ended its episode. Without clipping, the result equals the sum of
// rollout_gradient over the rollouts up to float rounding (tested: 1e-5 relative to the largest
// component); with one rollout it is rollout_gradient's, to the same rounding.
#pragma once

#include <vector>

#include "agents/rollout.hpp"

namespace agents {

// The reported policy/value/entropy are means over the rollouts of each rollout's term.
// Throws std::invalid_argument for no rollout, an empty one, or observations of another size.
GradientResult batched_rollout_gradient(ActorCritic& net, const std::vector<Rollout>& rollouts, const A3cOptions& options);

}  // namespace agents
