// The config of `orchestra train` / `serve` / `agent` (configs/a3c_general.yaml): which environments
// the A3C agents explore and the a3c: hyperparameters (agents/a3c_options.hpp).
//
//   name: a3c_general               results/<name>/ by default
//   environment: local-sgd          local-sgd (orchestra::LocalSgdBarrierEnv on real training), surrogate
//                                   (the same environment on the surrogate of training: env/surrogate/)
//                                   or toy (tests, smoke)
//   surrogate: FILE                 surrogate: the file `orchestra surrogate fit` wrote (relative to this
//                                   file), fitted on the experiments' workload
//   experiments: [x.yaml, y.yaml]   local-sgd: experiment configs (paths relative to this file);
//                                   agent k trains on experiments[k mod n] (Orchestra 3.1.3: agents
//                                   "explore the different environments of different workers");
//                                   with a3c.envs_per_agent K, its environment j on experiments[(k K + j) mod n]
//   clusters: {...}                 optional: a distribution of clusters (cluster_distribution_config.hpp);
//                                   every episode then draws its cluster and network from it, and the
//                                   experiments give only the workload (data, model, training, budget)
//   controller: {move: multiplicative, interval: rounds, ...}   orchestra-lcm keys for the environment's
//                                   controller; recorded in the policy file
//   reward: time                    eq1 (Orchestra Eq. 1, the default) or time (minus the step's time)
//   reward_record: episode          eq1's p* record: episode or history
//   time_reward_rounds: 10          time: reference rounds per unit of reward
//   move_cost_rounds: 0             time: reference rounds charged for each change of T (a switching cost)
//   eval_every_reference_rounds: 0  evaluate after every step (0), or once this much simulated time passed
//   max_reference_epochs: 0         also end an episode after this many reference epochs of time (0: never)
//   exploring_start: [0.25, 8]      training only: each episode starts at LCM's T* times a factor drawn
//                                   log-uniformly from this range (default 1: at T*, as deployment does)
//   focus: {files: [f.json], share: 0.5}   optional, with clusters: a share of the episodes draws its
//                                   cluster from the focus clusters of these files (`orchestra surrogate
//                                   hardest`: where a policy trails the best static T the most; Genet),
//                                   the rest from the distribution (local_sgd_barrier_env.hpp)
//   merge_episodes: false           local-sgd with a3c.envs_per_agent K > 1 and one experiment: the K
//                                   episodes' training runs as one stacked computation (what fills a GPU;
//                                   orchestra/rl/merged_barrier_env_vector.hpp); the same episodes as
//                                   without, up to floating-point reassociation
//   toy_step_ms: 0                  toy: sleep per step, standing in for an epoch's cost
//   a3c: {...}                      agents/a3c_options.hpp
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agents/a3c_options.hpp"
#include "agents/policy_file.hpp"
#include "orchestra/cluster_distribution.hpp"
#include "common/errors.hpp"
#include "orchestra/barrier_env.hpp"
#include "orchestra/vector_barrier_env.hpp"
#include "orchestra/rl/local_sgd_barrier_env.hpp"
#include "orchestra/reward.hpp"

namespace experiments {

enum class TrainEnvironment { LocalSgd, Surrogate, Toy };

struct TrainConfig {
  std::string file;
  std::string name = "a3c_train";
  TrainEnvironment environment = TrainEnvironment::LocalSgd;
  std::vector<std::string> experiments;  // resolved paths
  std::string surrogate_file;            // environment surrogate: resolved path
  std::shared_ptr<const env::SurrogateModel> surrogate;  // read and checked against every experiment
  std::optional<orchestra::ClusterDistribution> distribution;
  std::vector<std::string> focus_files;           // resolved paths
  std::vector<std::uint64_t> focus_draws;         // their clusters' draw seeds, in file order
  double focus_share = 0;
  YAML::Node controller;                 // read against each experiment by make_training_env
  double toy_step_ms = 0;
  orchestra::RecordScope reward_record = orchestra::RecordScope::Episode;
  orchestra::LocalSgdBarrierEnvConfig::Reward reward = orchestra::LocalSgdBarrierEnvConfig::Reward::Eq1;
  double time_reward_rounds = 10.0;
  double move_cost_rounds = 0;             // reward time: charged per change of T (local_sgd_barrier_env.hpp)
  double eval_every_reference_rounds = 0;  // 0: evaluate after every step (local_sgd_barrier_env.hpp)
  double max_reference_epochs = 0;         // 0: only the experiments' epoch budget ends an episode
  orchestra::Range exploring_start{1.0, 1.0, true};  // T at reset: T* x [lo, hi] (local_sgd_barrier_env.hpp)
  agents::PolicyControl control;           // how actions move T (the first experiment's), saved with the policy
  std::map<std::string, std::string> training_info;  // config, environment, reward...: saved with the policy
  bool merge_episodes = false;           // K episodes' training as one computation (see above)
  agents::A3cOptions a3c;
  int observation_size = 0;              // of the environment's state
  nlohmann::json identity;               // what the training is, for --resume (training_identity.hpp)
};

// Parses and validates (every experiment config is loaded once, so their errors come before any
// process starts). Throws common::ConfigError "file:line: key: message".
TrainConfig load_train_config(const std::string& path);
// The same from a document already read (Python's BarrierEnv merges its keyword overrides into the
// file's document, experiments/python/): `path` names it in errors, and relative paths in it
// (experiments:) are relative to path's folder (the current directory when it has none).
TrainConfig load_train_config(const YAML::Node& root, const std::string& path);

// The barrier environment's config of agent `index` (experiments[index mod n] with the training
// config's distribution, controller, reward and budget keys); local-sgd only.
orchestra::LocalSgdBarrierEnvConfig training_env_config(const TrainConfig& config, std::int64_t index);

// Agent `index`'s own environment.
std::unique_ptr<orchestra::BarrierEnv> make_training_env(const TrainConfig& config, std::int64_t index);

// Agent `agent`'s own a3c.envs_per_agent = K environments: numbers agent K .. agent K + K - 1, so
// that with K = 1 agent k trains on experiments[k mod n] as before, and with K > 1 the
// experiments are spread over every agent's environments.
std::vector<std::unique_ptr<orchestra::BarrierEnv>> make_agent_envs(const TrainConfig& config, int agent);

// With merge_episodes: agent `agent`'s K environments whose training runs as one, behind the
// learners' vector interface (the same episode streams as make_agent_envs' environments).
std::unique_ptr<orchestra::VectorBarrierEnv> make_merged_agent_envs(const TrainConfig& config);

}  // namespace experiments
