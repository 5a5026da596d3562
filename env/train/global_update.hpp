// The global model after a round of model averaging, beyond the plain weighted mean: FedNova's
// normalized averaging and the outer optimizer (env/round_plan.hpp says what each computes).
// Tensors are lists in one order (a model's parameters); x_t is the global model at the round's
// start, before any worker's local steps.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "env/round_plan.hpp"

namespace env {

// a_i of FedNova for `steps` local steps of SGD with momentum `rho` (a fresh buffer): the number of
// plain steps the momentum steps amount to. rho = 0 gives `steps`.
double fednova_effective_steps(int steps, double rho);

// sum_i p_i x_i, or with `effective_steps` (FedNova): x_t - tau_eff * sum_i p_i (x_t - x_i) / a_i.
std::vector<torch::Tensor> combine(const std::vector<torch::Tensor>& x_t, const std::vector<std::vector<torch::Tensor>>& workers,
                                   const std::vector<double>& p, const std::vector<double>* effective_steps);

// The outer optimizer's state: one momentum buffer per tensor, from zero.
class OuterState {
 public:
  // Moves `x_t` by the pseudo-gradient x_t - average and returns the new global model.
  std::vector<torch::Tensor> step(const std::vector<torch::Tensor>& x_t, const std::vector<torch::Tensor>& average,
                                  const OuterOptimizer& options);
  const std::vector<torch::Tensor>& momentum() const { return momentum_; }

 private:
  std::vector<torch::Tensor> momentum_;
};

}  // namespace env
