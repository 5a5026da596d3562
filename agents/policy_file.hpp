// A trained barrier policy as one file, readable from C++ (A3cPolicy::load) and from Python:
//
//   import torch
//   policy = torch.load("policy.pt")      # a dict, written by torch::pickle_save (zip format)
//   policy["format"]            -> "orchestra-a3c-policy"
//   policy["format_version"]    -> 1
//   policy["observation_size"]  -> 92  (orchestra/rl_state.hpp, StateLayout::kStateSize)
//   policy["hidden"]            -> [64, 64]   trunk widths, tanh after each Linear
//   policy["actions"]           -> [-1, 0, 1] the barrier move of each policy output
//   policy["updates"]           -> optimizer steps the network was trained for
//   policy["action_unit_ms"]    -> ms one action moves T in training (the controller's unit_ms);
//                                  0 = the default unit (the fastest worker's batch time). Files
//                                  written before this entry existed load with 0.
//   policy["state_dict"]        -> {"trunk.0.weight": Tensor[64, 92], "trunk.0.bias": ...,
//                                   "trunk.2.weight": ..., "policy.weight": Tensor[3, 64],
//                                   "policy.bias", "value.weight": Tensor[1, 64], "value.bias"}
//
// The state_dict names are those of an equivalent torch.nn.Module with `trunk = nn.Sequential(
// Linear, Tanh, Linear, Tanh)`, `policy = Linear(h, 3)`, `value = Linear(h, 1)`, so
// `module.load_state_dict(policy["state_dict"])` works in Python. (Not checked here: this machine
// has no Python PyTorch; torch::pickle_save is the writer that libtorch documents as torch.load's.)
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "agents/actor_critic.hpp"

namespace agents {

class A3cPolicy {
 public:
  explicit A3cPolicy(ActorCritic net, std::int64_t updates = 0, double action_unit_ms = 0);

  // Action in {-1, 0, +1}: the most probable one when deterministic (deployment is greedy), else
  // sampled from pi(.|s) with `rng` (required then).
  int predict(const std::vector<float>& observation, bool deterministic = true, std::mt19937_64* rng = nullptr);
  // pi(.|s) over the 3 actions, in index order (-1, 0, +1).
  std::vector<double> probabilities(const std::vector<float>& observation);

  void save(const std::string& path) const;  // atomic
  // Throws std::runtime_error naming the path for a missing file or one of another layout.
  static A3cPolicy load(const std::string& path);

  ActorCritic& network() { return net_; }
  std::int64_t updates() const { return updates_; }
  // The unit the network learned its moves in: deploying with another one changes what each action
  // does (orchestra-a3c uses this one unless the config names a unit_ms).
  double action_unit_ms() const { return action_unit_ms_; }
  int observation_size() const { return net_->spec().observation_size; }

 private:
  ActorCritic net_;
  std::int64_t updates_ = 0;
  double action_unit_ms_ = 0;
};

// Draws index i with probability probs[i] from a uniform 53-bit draw of `rng` (portable across
// standard libraries, unlike std::discrete_distribution, so one seed gives one trajectory anywhere).
int sample_index(const std::vector<double>& probs, std::mt19937_64& rng);

}  // namespace agents
