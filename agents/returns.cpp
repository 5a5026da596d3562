#include "agents/returns.hpp"

#include <stdexcept>
#include <string>

namespace agents {

NStepTargets n_step_targets(const std::vector<double>& rewards, const std::vector<double>& values,
                            double bootstrap_value, double gamma) {
  if (rewards.size() != values.size())
    throw std::invalid_argument("n-step returns: " + std::to_string(rewards.size()) + " rewards but " +
                                std::to_string(values.size()) + " values");
  if (!(gamma >= 0 && gamma <= 1)) throw std::invalid_argument("n-step returns: gamma must be in [0, 1], got " + std::to_string(gamma));
  NStepTargets out;
  out.returns.resize(rewards.size());
  out.advantages.resize(rewards.size());
  double running = bootstrap_value;
  for (std::size_t k = rewards.size(); k-- > 0;) {
    running = rewards[k] + gamma * running;
    out.returns[k] = running;
    out.advantages[k] = running - values[k];
  }
  return out;
}

NStepTargets gae_targets(const std::vector<double>& rewards, const std::vector<double>& values, const std::vector<bool>& dones,
                         double bootstrap_value, double gamma, double lambda) {
  if (rewards.size() != values.size() || rewards.size() != dones.size())
    throw std::invalid_argument("GAE: " + std::to_string(rewards.size()) + " rewards, " + std::to_string(values.size()) + " values and " +
                                std::to_string(dones.size()) + " done flags");
  if (!(gamma >= 0 && gamma <= 1 && lambda >= 0 && lambda <= 1))
    throw std::invalid_argument("GAE: gamma and lambda must be in [0, 1], got " + std::to_string(gamma) + " and " + std::to_string(lambda));
  NStepTargets out;
  out.returns.resize(rewards.size());
  out.advantages.resize(rewards.size());
  double advantage = 0;
  for (std::size_t k = rewards.size(); k-- > 0;) {
    const double next_value = dones[k] ? 0.0 : (k + 1 < rewards.size() ? values[k + 1] : bootstrap_value);
    const double carry = dones[k] ? 0.0 : advantage;
    const double delta = rewards[k] + gamma * next_value - values[k];
    advantage = delta + gamma * lambda * carry;
    out.advantages[k] = advantage;
    out.returns[k] = advantage + values[k];
  }
  return out;
}

}  // namespace agents
