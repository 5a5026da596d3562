#include "env/train/global_update.hpp"

#include <cmath>
#include <stdexcept>

namespace env {

double fednova_effective_steps(int steps, double rho) {
  if (steps <= 0) return 0.0;
  if (rho <= 0) return steps;
  // sum_{k=1..tau} (1 - rho^k) / (1 - rho): step k of momentum SGD from a zero buffer moves by
  // (1 - rho^k) / (1 - rho) gradients.
  return (steps - rho * (1.0 - std::pow(rho, steps)) / (1.0 - rho)) / (1.0 - rho);
}

std::vector<torch::Tensor> combine(const std::vector<torch::Tensor>& x_t, const std::vector<std::vector<torch::Tensor>>& workers,
                                   const std::vector<double>& p, const std::vector<double>* effective_steps) {
  if (workers.empty() || workers.size() != p.size()) throw std::invalid_argument("combine: one weight per worker");
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out;
  if (!effective_steps) {
    for (std::size_t k = 0; k < workers[0].size(); ++k) {
      torch::Tensor mean = workers[0][k] * p[0];
      for (std::size_t i = 1; i < workers.size(); ++i) mean.add_(workers[i][k], p[i]);
      out.push_back(mean);
    }
    return out;
  }
  double tau_eff = 0;
  for (std::size_t i = 0; i < workers.size(); ++i) tau_eff += p[i] * (*effective_steps)[i];
  for (std::size_t k = 0; k < x_t.size(); ++k) {
    torch::Tensor direction = torch::zeros_like(x_t[k]);
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const double a = (*effective_steps)[i];
      if (a > 0) direction.add_(x_t[k] - workers[i][k], p[i] / a);
    }
    out.push_back(x_t[k] - direction * tau_eff);
  }
  return out;
}

std::vector<torch::Tensor> OuterState::step(const std::vector<torch::Tensor>& x_t, const std::vector<torch::Tensor>& average,
                                            const OuterOptimizer& o) {
  torch::NoGradGuard no_grad;
  if (momentum_.empty())
    for (const auto& t : x_t) momentum_.push_back(torch::zeros_like(t));
  std::vector<torch::Tensor> out;
  for (std::size_t k = 0; k < x_t.size(); ++k) {
    const torch::Tensor delta = x_t[k] - average[k];
    momentum_[k].mul_(o.momentum).add_(delta);
    const torch::Tensor update = o.nesterov ? delta + momentum_[k] * o.momentum : momentum_[k].clone();
    out.push_back(x_t[k] - update * o.lr);
  }
  return out;
}

}  // namespace env
