#include "agents/batched_gradient.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "agents/returns.hpp"

namespace agents {

GradientResult batched_rollout_gradient(ActorCritic& net, const std::vector<Rollout>& rollouts, const A3cOptions& options) {
  if (rollouts.empty()) throw std::invalid_argument("batched gradient: no rollout");
  const auto size = static_cast<std::int64_t>(net->spec().observation_size);
  std::int64_t steps = 0;
  for (const Rollout& r : rollouts) {
    if (r.observations.empty()) throw std::invalid_argument("batched gradient: an empty rollout");
    steps += static_cast<std::int64_t>(r.observations.size());
  }
  const auto count = static_cast<std::int64_t>(rollouts.size());
  // Rows 0..steps-1: every rollout's states in order; then one row per rollout, its next state
  // (the bootstrap of V).
  std::vector<float> stacked;
  stacked.reserve(static_cast<std::size_t>((steps + count) * size));
  const auto append = [&](const std::vector<float>& o) {
    if (static_cast<std::int64_t>(o.size()) != size)
      throw std::invalid_argument("batched gradient: an observation of " + std::to_string(o.size()) + " values, expected " +
                                  std::to_string(size));
    stacked.insert(stacked.end(), o.begin(), o.end());
  };
  for (const Rollout& r : rollouts)
    for (const auto& o : r.observations) append(o);
  for (const Rollout& r : rollouts) append(r.next_observation);
  const torch::Tensor all = torch::from_blob(stacked.data(), {steps + count, size}, torch::kFloat);

  torch::AutoGradMode autograd(true);
  net->zero_grad();
  const ActorCriticOutput out = net->forward(all);
  const torch::Tensor values = out.value.detach().to(torch::kDouble).contiguous();
  const double* v = values.data_ptr<double>();

  std::vector<std::int64_t> actions;
  std::vector<double> returns, advantages, weights;
  actions.reserve(static_cast<std::size_t>(steps));
  std::int64_t at = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    const Rollout& r = rollouts[static_cast<std::size_t>(k)];
    const auto length = static_cast<std::int64_t>(r.observations.size());
    const double bootstrap = r.terminated ? 0.0 : v[steps + k];  // Alg. S3: R = 0 for terminal s_t
    const NStepTargets t = n_step_targets(r.rewards, std::vector<double>(v + at, v + at + length), bootstrap, options.gamma);
    actions.insert(actions.end(), r.action_indices.begin(), r.action_indices.end());
    returns.insert(returns.end(), t.returns.begin(), t.returns.end());
    advantages.insert(advantages.end(), t.advantages.begin(), t.advantages.end());
    weights.insert(weights.end(), static_cast<std::size_t>(length), 1.0 / static_cast<double>(length));  // each rollout's mean
    at += length;
  }
  const auto as_tensor = [](const std::vector<double>& x) { return torch::tensor(x, torch::kDouble).to(torch::kFloat); };
  const torch::Tensor w = as_tensor(weights);
  const torch::Tensor log_probs = torch::log_softmax(out.logits.narrow(0, 0, steps), -1);
  const torch::Tensor chosen = log_probs.gather(1, torch::tensor(actions, torch::kLong).unsqueeze(1)).squeeze(1);
  // The advantages are constants: the actor does not train the critic (a3c_loss.hpp).
  const torch::Tensor policy = -(w * chosen * as_tensor(advantages)).sum();
  const torch::Tensor value = (w * (as_tensor(returns) - out.value.narrow(0, 0, steps)).pow(2)).sum();
  const torch::Tensor entropy = (w * -(log_probs.exp() * log_probs).sum(-1)).sum();
  const torch::Tensor total = policy + options.value_loss_coef * value - options.entropy_coef * entropy;
  total.backward();

  GradientResult g;
  g.norm_before_clip = clip_gradients(*net, options.max_grad_norm);
  g.gradient = flat_gradients(net);
  g.policy_loss = policy.item<double>() / static_cast<double>(count);
  g.value_loss = value.item<double>() / static_cast<double>(count);
  g.entropy = entropy.item<double>() / static_cast<double>(count);
  return g;
}

}  // namespace agents
