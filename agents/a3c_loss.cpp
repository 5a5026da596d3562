#include "agents/a3c_loss.hpp"

#include <stdexcept>
#include <string>

namespace agents {

A3cLoss a3c_loss(const ActorCriticOutput& output, const std::vector<int>& action_indices,
                 const std::vector<double>& returns, const std::vector<double>& advantages,
                 const A3cOptions& options) {
  const auto steps = static_cast<std::int64_t>(action_indices.size());
  if (steps == 0 || output.logits.size(0) != steps || static_cast<std::int64_t>(returns.size()) != steps ||
      static_cast<std::int64_t>(advantages.size()) != steps)
    throw std::invalid_argument("a3c loss: expected one logit row, return and advantage per action (" +
                                std::to_string(steps) + " actions, " + std::to_string(output.logits.size(0)) +
                                " rows, " + std::to_string(returns.size()) + " returns, " +
                                std::to_string(advantages.size()) + " advantages)");
  const auto as_tensor = [](const std::vector<double>& v) {
    return torch::tensor(std::vector<double>(v), torch::kDouble).to(torch::kFloat);
  };
  std::vector<std::int64_t> idx(action_indices.begin(), action_indices.end());
  const torch::Tensor actions = torch::tensor(idx, torch::kLong);
  const torch::Tensor log_probs = torch::log_softmax(output.logits, -1);
  const torch::Tensor chosen = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1);
  const torch::Tensor adv = as_tensor(advantages);  // constants: the actor does not train the critic
  const torch::Tensor ret = as_tensor(returns);

  const torch::Tensor policy = -(chosen * adv).mean();
  const torch::Tensor value = (ret - output.value).pow(2).mean();
  const torch::Tensor entropy = -(log_probs.exp() * log_probs).sum(-1).mean();

  A3cLoss loss;
  loss.total = policy + options.value_loss_coef * value - options.entropy_coef * entropy;
  loss.policy = policy.item<double>();
  loss.value = value.item<double>();
  loss.entropy = entropy.item<double>();
  return loss;
}

double clip_gradients(torch::nn::Module& net, double max_norm) {
  double squared = 0;
  for (const auto& p : net.parameters())
    if (p.grad().defined()) squared += p.grad().to(torch::kDouble).pow(2).sum().item<double>();
  const double norm = std::sqrt(squared);
  if (max_norm > 0 && norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (auto& p : net.parameters())
      if (p.grad().defined()) p.mutable_grad().mul_(scale);
  }
  return norm;
}

}  // namespace agents
