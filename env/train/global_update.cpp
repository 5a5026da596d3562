#include "env/train/global_update.hpp"

#include <stdexcept>

namespace env {

std::vector<torch::Tensor> combine(const GlobalAverage& g, double rho, const std::vector<torch::Tensor>& x_t,
                                   const std::vector<std::vector<torch::Tensor>>& workers) {
  const std::vector<double>& p = g.weights;
  if (workers.empty() || workers.size() != p.size()) throw std::invalid_argument("combine: one model per member");
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out;
  if (!g.fednova) {
    for (std::size_t k = 0; k < workers[0].size(); ++k) {
      torch::Tensor mean = workers[0][k] * p[0];
      for (std::size_t i = 1; i < workers.size(); ++i) mean.add_(workers[i][k], p[i]);
      out.push_back(mean);
    }
    return out;
  }
  const std::vector<double> a = g.effective_steps(rho);
  const double tau_eff = g.tau_eff(rho);
  for (std::size_t k = 0; k < x_t.size(); ++k) {
    torch::Tensor direction = torch::zeros_like(x_t[k]);
    for (std::size_t i = 0; i < workers.size(); ++i)
      if (a[i] > 0) direction.add_(x_t[k] - workers[i][k], p[i] / a[i]);
    out.push_back(x_t[k] - direction * tau_eff);
  }
  return out;
}

std::vector<torch::Tensor> global_term(const GlobalAverage& g, double rho, int worker, const std::vector<torch::Tensor>& x_t,
                                       const std::vector<torch::Tensor>& x_i) {
  torch::NoGradGuard no_grad;
  const double p = g.weight_of(worker);
  std::vector<torch::Tensor> term;
  if (!g.fednova) {
    for (const auto& t : x_i) term.push_back(t * p);
    return term;
  }
  // FedNova: p_i / a_i (x_t - x_i); a worker without steps (a_i = 0) or outside g adds nothing.
  int steps = 0;
  for (std::size_t m = 0; m < g.members.size(); ++m)
    if (g.members[m] == worker) steps = g.steps[m];
  const double a = fednova_effective_steps(steps, rho);
  for (std::size_t k = 0; k < x_i.size(); ++k) term.push_back(a > 0 ? (x_t[k] - x_i[k]) * (p / a) : torch::zeros_like(x_i[k]));
  return term;
}

std::vector<torch::Tensor> global_from_sum(const GlobalAverage& g, double rho, const std::vector<torch::Tensor>& x_t,
                                           const std::vector<torch::Tensor>& sum) {
  if (!g.fednova) return sum;
  torch::NoGradGuard no_grad;
  const double tau_eff = g.tau_eff(rho);
  std::vector<torch::Tensor> out;
  for (std::size_t k = 0; k < sum.size(); ++k) out.push_back(x_t[k] - sum[k] * tau_eff);
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
