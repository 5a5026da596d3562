// A trained barrier policy as one file, readable from C++ (A3cPolicy::load) and from Python:
//
//   import torch
//   policy = torch.load("policy.pt", weights_only=False)  # a dict, written by torch::pickle_save (zip format);
//                                                       # PyTorch >= 2.6 refuses its type tags without weights_only=False
//   policy["format"]            -> "orchestra-a3c-policy"
//   policy["format_version"]    -> 2
//   policy["observation_size"]  -> 22  (orchestra/rl_state.hpp, StateLayout::kStateSize)
//   policy["hidden"]            -> [64, 64]   trunk widths, tanh after each Linear
//   policy["actions"]           -> [-1, 0, 1] the barrier move of each policy output (-m ... m for
//                                  a controller with max_move m: [-2, -1, 0, 1, 2] moves T by
//                                  factor^2, factor, none, ... with `factor`)
//   policy["updates"]           -> optimizer steps the network was trained for
//   policy["controller"]        -> how the network's actions were applied in training, which
//                                  deployment repeats unless a config overrides a key:
//        {"move": "additive" | "multiplicative", "unit_ms": 0.0 (additive: ms per action; 0 =
//         the fastest worker's batch time), "factor": 2.0 (multiplicative), "interval": "epoch" |
//         "rounds", "interval_rounds": 1, "min_T_ms": 0.0, "max_T_ms": 0.0 (bounds; 0 = default),
//         "min_T_x_start": 0.0, "max_T_x_start": 0.0 (bounds as factors of the starting T; 0 = none),
//         "floor_cap_steps": 0.0 (min_T_x_start's floor at most this many slowest-worker steps;
//         0 = no cap; files without it: 0),
//         "min_T_steps": 0.0 (T at least this many slowest-worker steps; 0 = none; files without it: 0),
//         "T_cap_steps": 0.0, "T_cap_x_comm": 0.0 (the starting T* at most max(this many slowest-worker
//         steps, this multiple of the all-reduce time); 0 = no cap; files without them: 0),
//         "T_cap_above_steps": 0.0 (that cap only where T* is at least this many slowest steps),
//         "weighting": "uniform" | "all_workers" (the model average; files without it: uniform),
//         "state": "base" | "progress" | "lead" (the state's entries, orchestra/rl_state.hpp; files
//         without it: base, 22 entries; progress and lead: 25),
//         "start": "lcm" | "planned" (the T the network moves from at deployment: LCM's T*, or the
//         static T planned on the surrogate of training; files without it: lcm),
//         "planned_min_T_x_start", "planned_max_T_x_start": min_T_x_start and max_T_x_start where
//         the start is planned (0 = as min_T_x_start and max_T_x_start; files without them: 0)}
//   policy["training"]          -> {"config": "a3c_general", "algorithm": "a3c", "reward": "time",
//                                   "reward_record": "episode", "environment": "...", and
//                                   "init_policy": the file it was fine-tuned from, if any} (strings)
//   policy["state_dict"]        -> {"trunk.0.weight": Tensor[64, 22], "trunk.0.bias": ...,
//                                   "trunk.2.weight": ..., "policy.weight": Tensor[3, 64],
//                                   "policy.bias", "value.weight": Tensor[1, 64], "value.bias"}
//
// The state_dict names are those of an equivalent torch.nn.Module with `trunk = nn.Sequential(
// Linear, Tanh, Linear, Tanh)`, `policy = Linear(h, 3)`, `value = Linear(h, 1)`, so
// `module.load_state_dict(policy["state_dict"])` (with Linear(h, len(policy["actions"]))) works in Python (tests/python/ checks this with
// Debian's python3-torch). Files of format version 1 (92-entry state, additive moves only) are
// refused with a message to retrain.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "agents/actor_critic.hpp"
#include "orchestra/barrier_controller.hpp"

namespace agents {

// The format every policy file records ("format" in its pickle, stored uncompressed in the zip):
// what a command that writes one looks for before replacing a file (common::check_replaceable_output).
inline constexpr const char* kPolicyFileMarker = "orchestra-a3c-policy";

// The T a deployed network moves from (the policy file's controller.start): LCM's T* (3.1.1, as
// the network is trained), or the static T `planned-t` plans on the surrogate of training
// (experiments/registry/planned_barrier.hpp), which the shipped policy deploys since the
// twenty-second held-out suite (BENCHMARKS.md). Training ignores it: episodes start at LCM's T*.
enum class BarrierStart { Lcm, Planned };
const char* barrier_start_name(BarrierStart start);

// How a policy's actions act on T: what the policy file's "controller" entry records.
struct PolicyControl {
  orchestra::BarrierMove move = orchestra::BarrierMove::Additive;
  double unit_ms = 0;
  double factor = 2.0;
  int max_move = 1;  // actions -max_move ... +max_move (the file's "actions" list)
  orchestra::DecisionInterval interval = orchestra::DecisionInterval::Epoch;
  int interval_rounds = 1;
  double min_barrier_ms = 0;
  double max_barrier_ms = 0;
  double min_barrier_x_start = 0;
  double max_barrier_x_start = 0;
  double floor_cap_steps = 0;  // BarrierControllerOptions::floor_cap_steps (files without it: 0)
  double min_barrier_steps = 0;  // BarrierControllerOptions::min_barrier_steps (files without it: 0)
  double lcm_cap_steps = 0;    // BarrierControllerOptions::lcm_cap_steps (files without it: 0)
  double lcm_cap_x_comm = 0;   // BarrierControllerOptions::lcm_cap_x_comm (files without it: 0)
  double lcm_cap_above_steps = 0;  // BarrierControllerOptions::lcm_cap_above_steps (files without it: 0)
  // The model average the policy was trained with (absent from files written before it: uniform).
  env::AverageWeighting weighting = env::AverageWeighting::Uniform;
  // The state's entries the network reads (absent from files written before it: base).
  orchestra::StateFeatures state_features = orchestra::StateFeatures::Base;
  // Where deployment starts T (absent from files written before it: lcm); not a controller option,
  // so `of` leaves it lcm and `apply_to` does not write it.
  BarrierStart start = BarrierStart::Lcm;
  // The bounds around a planned start, in place of min/max_barrier_x_start (0 = those); a start
  // that falls back to LCM's T* keeps the bounds the network was trained with.
  double planned_min_barrier_x_start = 0;
  double planned_max_barrier_x_start = 0;

  static PolicyControl of(const orchestra::BarrierControllerOptions& options);
  // Writes these fields into `options` (the rest of them untouched).
  void apply_to(orchestra::BarrierControllerOptions& options) const;
  bool operator==(const PolicyControl& other) const;
  // The controller as training ran it: the deployment's start and planned bounds cleared, so that
  // a redeployed file compares equal to its training config's controller.
  PolicyControl as_trained() const;
};

// The barrier controller's checks of `control`, with its bounds and with those around a planned
// start: std::invalid_argument naming the option otherwise.
void check_control(const PolicyControl& control);

class A3cPolicy {
 public:
  explicit A3cPolicy(ActorCritic net, std::int64_t updates = 0, PolicyControl control = {},
                     std::map<std::string, std::string> training = {});

  // Action in [-max_move, +max_move]: the most probable one when deterministic (deployment is greedy), else
  // sampled from pi(.|s) with `rng` (required then).
  int predict(const std::vector<float>& observation, bool deterministic = true, std::mt19937_64* rng = nullptr);
  // pi(.|s) over the actions, in index order (-max_move ... +max_move).
  std::vector<double> probabilities(const std::vector<float>& observation);

  void save(const std::string& path) const;  // atomic
  // Throws common::DataError naming the path for a missing file or one of another layout.
  static A3cPolicy load(const std::string& path);

  ActorCritic& network() { return net_; }
  std::int64_t updates() const { return updates_; }
  // How the network's moves were applied in training: deploying with another unit, factor or
  // interval changes what each action does (orchestra-a3c uses these unless the config names them).
  const PolicyControl& control() const { return control_; }
  const std::map<std::string, std::string>& training() const { return training_; }
  int observation_size() const { return net_->spec().observation_size; }

 private:
  static A3cPolicy from_pickle(const c10::IValue& value, const std::string& path);

  ActorCritic net_;
  std::int64_t updates_ = 0;
  PolicyControl control_;
  std::map<std::string, std::string> training_;
};

// A3cPolicy::load, then a check that its network is of `shape` (observation size and hidden
// widths): for a3c.init_policy, which fine-tunes it. Throws std::invalid_argument naming the path
// and both shapes otherwise.
A3cPolicy load_policy_of_shape(const std::string& path, const ActorCriticSpec& shape);

// Draws index i with probability probs[i] from a uniform 53-bit draw of `rng` (portable across
// standard libraries, unlike std::discrete_distribution, so one seed gives one trajectory anywhere).
int sample_index(const std::vector<double>& probs, std::mt19937_64& rng);

}  // namespace agents
