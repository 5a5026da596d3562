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

}  // namespace agents
