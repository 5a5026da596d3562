// The actor-critic network of A3C (Mnih et al. 2016, Sec. 4: "a convolutional neural network that
// has one softmax output for the policy pi(a_t|s_t; theta) and one linear output for the value
// function V(s_t; theta_v), with all non-output layers shared"). Here the input is the Barrier
// Controller's state (orchestra/rl_state.hpp), so the shared trunk is a small MLP.
//
// Parameter names (what Python sees in the saved policy, see agents/policy_file.hpp):
//   trunk.<2i>.weight / trunk.<2i>.bias   Linear layer i of the trunk (tanh after each)
//   policy.weight / policy.bias           logits over the actions, index order of
//                                         orchestra/barrier_env.hpp (3 actions: 0: -1, 1: keep,
//                                         2: +1; 2m + 1 for moves up to m)
//   value.weight / value.bias             V(s)
#pragma once

#include <torch/torch.h>

#include <vector>

namespace agents {

struct ActorCriticSpec {
  int observation_size = 0;
  std::vector<int> hidden = {64, 64};
  int actions = 3;  // policy outputs: orchestra::num_barrier_actions(max_move)
};

struct ActorCriticOutput {
  torch::Tensor logits;  // [batch, actions]
  torch::Tensor value;   // [batch]
};

class ActorCriticImpl : public torch::nn::Module {
 public:
  explicit ActorCriticImpl(ActorCriticSpec spec);
  // observations: [batch, observation_size] float
  ActorCriticOutput forward(const torch::Tensor& observations);
  const ActorCriticSpec& spec() const { return spec_; }

 private:
  ActorCriticSpec spec_;
  torch::nn::Sequential trunk_{nullptr};
  torch::nn::Linear policy_{nullptr};
  torch::nn::Linear value_{nullptr};
};
TORCH_MODULE(ActorCritic);

// Total number of scalar parameters (the length of every gradient and parameter message).
std::int64_t parameter_count(ActorCritic& net);

// Flat float copies, in named_parameters() order (the order is the same in every process that
// builds the network from the same spec, which the protocol's size check relies on).
std::vector<float> flat_parameters(ActorCritic& net);
std::vector<float> flat_gradients(ActorCritic& net);  // zeros where a gradient is undefined
// Throws std::invalid_argument when the length is not parameter_count(net).
void set_flat_parameters(ActorCritic& net, const std::vector<float>& values);
void set_flat_gradients(ActorCritic& net, const std::vector<float>& values);

// Copies every parameter of `from` into `to` (same spec).
void copy_parameters(ActorCritic& from, ActorCritic& to);

}  // namespace agents
