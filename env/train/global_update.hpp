// The tensors of a round's global model (env/sim/averaging_round.hpp describes the round: members,
// weights, FedNova's steps, the outer optimizer), computed in one process (combine: the simulator's
// replicas) or as a sum across ranks (global_term, all-reduced, then global_from_sum: a real run).
// Tensors are lists in one order (a model's parameters); x_t is the global model at the round's
// start, before any worker's local steps.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "env/round_plan.hpp"
#include "env/sim/averaging_round.hpp"

namespace env {

// The global model of `g` from its members' models (`workers`, in g.members' order): sum_i p_i x_i,
// or under FedNova x_t - tau_eff * sum_i p_i (x_t - x_i) / a_i, with a_i for local momentum `rho`.
std::vector<torch::Tensor> combine(const GlobalAverage& g, double rho, const std::vector<torch::Tensor>& x_t,
                                   const std::vector<std::vector<torch::Tensor>>& workers);

// The same sum split across ranks: `worker`'s term (zeros for a worker outside `g`), x_i its model ...
std::vector<torch::Tensor> global_term(const GlobalAverage& g, double rho, int worker, const std::vector<torch::Tensor>& x_t,
                                       const std::vector<torch::Tensor>& x_i);
// ... and, from the terms' sum over every worker, the global model.
std::vector<torch::Tensor> global_from_sum(const GlobalAverage& g, double rho, const std::vector<torch::Tensor>& x_t,
                                           const std::vector<torch::Tensor>& sum);

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
