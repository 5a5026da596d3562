// The `orchestra-a3c` policy of `orchestra run`: Orchestra's barrier controller (LCM start, tau_n =
// T / t_b^n, speed partition, Eq. 2 averaging; the orchestra-lcm keys of orchestra_options.hpp)
// whose T is then moved every epoch (or every K rounds) by a trained A3C network (3.1.3).
//
// Keys: policy: PATH (a policy.pt of `orchestra train`, relative to the config file's folder unless
// absolute or found as given; default: the pretrained policy, pretrained/orchestra-a3c.pt), and the
// orchestra-lcm keys; the move, unit or factor, interval and bounds default to the ones the policy
// file records (what the network was trained with).
//   start: (the file's)   the T the network moves from: lcm, LCM's T* (3.1.1), or planned: the
//                         static T planned-t would run (planned_barrier.hpp; its keys surrogate,
//                         planning_seeds and sweep apply), LCM's T* where that plan is a guess.
//                         Default: the policy file's controller.start (the shipped policy: planned;
//                         files without one: lcm). Where the file's planned start cannot be planned
//                         with the defaults (a program without the surrogate, or a workload the
//                         pretrained surrogate was not fitted on: the quickstart's), LCM's T*, and
//                         config.json says so under start_fallback; `start: planned` in the config
//                         is refused there instead. From a planned T the bounds are the file's
//                         planned_min_T_x_start and planned_max_T_x_start where it has them (the
//                         shipped policy: [T/4, T]); from LCM's T* the bounds it was trained with
// Deployment only:
//   actions: greedy       the network's most probable move (default), or sampled: drawn from its
//                         probabilities, as during training, from `seed` (default: the experiment's)
//   after_target: hold    once a test evaluation reaches training.target_accuracy, T stays (default;
//                         training episodes end there, so later moves were never trained), or continue
//   hold_x_target: 1      with after_target: hold, T stays from this fraction of the target on (0-1]
#pragma once

#include <memory>

#include "env/barrier_policy.hpp"
#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "common/yaml_reader.hpp"

namespace experiments {

enum class A3cActions { Greedy, Sampled };
enum class AfterTarget { Hold, Continue };

// Throws common::ConfigError (file:line: key) for a missing/unreadable policy file or one trained for
// another observation size.
std::string pretrained_policy_path();
std::unique_ptr<env::BarrierPolicy> make_a3c_policy(common::YamlReader& r, const ExperimentConfig& config);

// `orchestra-random`: the same controller with T moved by a uniformly random action each epoch
// (the baseline of issue 5's learning measurement). Keys: seed (default: the experiment's), the
// orchestra-lcm keys, start: lcm|planned (as orchestra-a3c's; default lcm), planned_min_T_x_start
// and planned_max_T_x_start (the bounds around a planned start; they need start: planned), and
// start_fallback: TEXT (with start: lcm, why a planned start was not possible; kept in config.json).
std::unique_ptr<env::BarrierPolicy> make_random_barrier_policy(common::YamlReader& r, const ExperimentConfig& config);

}  // namespace experiments
