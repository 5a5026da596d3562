// The config of `orchestra train` / `serve` / `agent` (configs/a3c_train.yaml): which environments
// the A3C agents explore and the a3c: hyperparameters (agents/a3c_options.hpp).
//
//   name: a3c_train                 results/<name>/ by default
//   environment: local-sgd          local-sgd (orchestra::LocalSgdBarrierEnv) or toy (tests, smoke)
//   experiments: [x.yaml, y.yaml]   local-sgd: experiment configs (paths relative to this file);
//                                   agent k trains on experiments[k mod n] (Orchestra 3.1.3: agents
//                                   "explore the different environments of different workers")
//   controller: {M: 8, ...}         orchestra-lcm keys for the environment's controller
//   toy_step_ms: 0                  toy: sleep per step, standing in for an epoch's cost
//   a3c: {...}                      agents/a3c_options.hpp
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "agents/a3c_options.hpp"
#include "common/errors.hpp"
#include "orchestra/barrier_env.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/reward.hpp"

namespace experiments {

enum class TrainEnvironment { LocalSgd, Toy };

struct TrainConfig {
  std::string file;
  std::string name = "a3c_train";
  TrainEnvironment environment = TrainEnvironment::LocalSgd;
  std::vector<std::string> experiments;  // resolved paths
  YAML::Node controller;                 // read against each experiment by make_training_env
  double toy_step_ms = 0;
  // Eq. 1's p* record (orchestra/reward.hpp): "episode" (default) or "history".
  orchestra::RecordScope reward_record = orchestra::RecordScope::Episode;
  // What the environment pays (orchestra/rl/local_sgd_barrier_env.hpp): "eq1" (default) or
  // "epoch_time" (minus the epoch's simulated seconds / time_reward_scale_s).
  orchestra::LocalSgdBarrierEnvConfig::Reward reward = orchestra::LocalSgdBarrierEnvConfig::Reward::Eq1;
  double time_reward_scale_s = 10.0;
  double action_unit_ms = 0;  // the controller's unit_ms (0: each cluster's default), saved with the policy
  agents::A3cOptions a3c;
  int observation_size = 0;              // of the environment's state
};

// Parses and validates (every experiment config is loaded once, so their errors come before any
// process starts). Throws common::ConfigError "file:line: key: message".
TrainConfig load_train_config(const std::string& path);

// Agent `index`'s own environment.
std::unique_ptr<orchestra::BarrierEnv> make_training_env(const TrainConfig& config, int index);

}  // namespace experiments
