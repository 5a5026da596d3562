#include "agents/ppo_loss.hpp"

#include <stdexcept>
#include <string>

namespace agents {

PpoLoss ppo_loss(const ActorCriticOutput& output, const std::vector<int>& action_indices, const std::vector<double>& old_log_probs,
                 const std::vector<double>& advantages, const std::vector<double>& returns, const A3cOptions& options) {
  const auto n = static_cast<std::int64_t>(action_indices.size());
  if (n == 0 || output.logits.size(0) != n || static_cast<std::int64_t>(old_log_probs.size()) != n ||
      static_cast<std::int64_t>(advantages.size()) != n || static_cast<std::int64_t>(returns.size()) != n)
    throw std::invalid_argument("ppo loss: expected one logit row, old log-probability, advantage and return per action (" +
                                std::to_string(n) + " actions)");
  const auto as_tensor = [](const std::vector<double>& v) { return torch::tensor(v, torch::kDouble).to(torch::kFloat); };
  const std::vector<std::int64_t> idx(action_indices.begin(), action_indices.end());
  const torch::Tensor log_probs = torch::log_softmax(output.logits, -1);
  const torch::Tensor chosen = log_probs.gather(1, torch::tensor(idx, torch::kLong).unsqueeze(1)).squeeze(1);
  const torch::Tensor ratio = (chosen - as_tensor(old_log_probs)).exp();
  const torch::Tensor adv = as_tensor(advantages);
  const double eps = options.ppo_clip;
  const torch::Tensor surrogate = torch::min(ratio * adv, ratio.clamp(1 - eps, 1 + eps) * adv);
  const torch::Tensor policy = -surrogate.mean();
  const torch::Tensor value = (as_tensor(returns) - output.value).pow(2).mean();
  const torch::Tensor entropy = -(log_probs.exp() * log_probs).sum(-1).mean();
  PpoLoss loss;
  loss.total = policy + options.value_loss_coef * value - options.entropy_coef * entropy;
  loss.policy = policy.item<double>();
  loss.value = value.item<double>();
  loss.entropy = entropy.item<double>();
  loss.clip_fraction = ((ratio - 1).abs() > eps).to(torch::kDouble).mean().item<double>();
  return loss;
}

}  // namespace agents
