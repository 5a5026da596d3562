// The actor-critic's forward pass (actor_critic.hpp: tanh trunk, policy logits, value) written out
// in plain C++ for acting, while libtorch keeps the gradient. Why: the network is tiny (22 inputs,
// two layers of 64), and one libtorch forward costs tens of microseconds of dispatch whatever the
// batch, several times the arithmetic at the batch sizes a vectorized agent acts on
// (bench/bench_trainer.cpp measures both, BENCHMARKS.md "The trainer"). It computes the same
// function in float (then the softmax in double), so it agrees with ActorCriticImpl::forward to
// float rounding (tested: 1e-5), not bit for bit; the gradient is always libtorch's.
#pragma once

#include <vector>

#include "agents/actor_critic.hpp"

namespace agents {

// What the acting forward gives per row: pi(.|s) over the spec's actions (index order of
// orchestra/barrier_env.hpp) and V(s).
struct ActingOutput {
  std::vector<double> probabilities;  // [rows x actions]
  std::vector<double> values;         // [rows]
};

class ActingNetwork {
 public:
  explicit ActingNetwork(const ActorCriticSpec& spec);
  // Copies the parameters of `net` (of this spec; std::invalid_argument otherwise).
  void load(ActorCritic& net);
  // The same from flat values in parameter order (actor_critic.hpp's flat_parameters).
  void load(const std::vector<float>& flat);
  // observations: rows x observation_size floats, row after row. Reuses `out`'s storage.
  void forward(const float* observations, int rows, ActingOutput& out) const;
  const ActorCriticSpec& spec() const { return spec_; }

 private:
  struct Layer {
    int in = 0, out = 0;
    std::vector<float> weight_t;  // [in x out]: the transpose of torch's [out x in], so a row's
                                  // output accumulates with contiguous, vectorizable updates
    std::vector<float> bias;      // [out]
  };
  ActorCriticSpec spec_;
  std::vector<Layer> trunk_;
  Layer head_;  // the policy's logits and the value, as one layer of actions + 1 outputs
  std::size_t parameter_count_ = 0;
};

}  // namespace agents
