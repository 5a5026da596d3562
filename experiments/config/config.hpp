// An experiment: cluster, network, workload, budget, and the policies to compare. Parsed from
// YAML and validated in one place (load_config); every error names file:line and the key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "env/sim/cluster.hpp"
#include "env/surrogate/surrogate_model.hpp"
#include "common/errors.hpp"
#include "env/train/dataset.hpp"
#include "env/train/local_sgd_env.hpp"
#include "env/sim/network.hpp"

namespace experiments {

enum class ClusterMode { Simulated, Real };

// What trains the model of a simulated cluster (`runtime.training`): libtorch (real gradients on
// real data, LocalSgdEnv), or the surrogate of training (a fitted model of how the loss and
// accuracy move per round, SurrogateEnv: env/surrogate/), read from `runtime.surrogate: FILE`.
enum class TrainingBackend { Libtorch, Surrogate };

struct PolicyConfig {
  std::string kind;     // a name of the policy registry (experiments/registry/policy_registry.hpp)
  std::string label;    // names its results folder; defaults to kind, unique in an experiment
  YAML::Node params;    // the policy's own keys, read by its factory (errors keep file:line)
  YAML::Node source;    // the entry as written (a bare name or a mapping), for error positions
  std::string path;     // "policies[2]", for error messages
};

struct Budget {
  int epochs = 5;                // stop after this many epochs
  double max_sim_seconds = 0;    // and/or after this much simulated time (0 = no limit)
  double target_accuracy = 0.85; // time to target is measured against this
  bool stop_at_target = false;   // end a policy's run once it reaches the target
  int eval_every_rounds = 0;     // also evaluate every K rounds (0 = only after each epoch)
};

struct ExperimentConfig {
  std::string file;  // where it came from, for messages
  std::string name = "experiment";
  std::uint64_t seed = 1;
  std::vector<std::uint64_t> seeds;  // seeds: [1, 2, 3]: run every policy for each (orchestra run)
  ClusterMode mode = ClusterMode::Simulated;
  std::string mode_where;  // "file:line" of cluster.mode: a command that cannot run this mode names it
  env::DataSpec data;
  env::ClusterSpec cluster;
  env::NetworkSpec network;
  env::TrainingSpec training;  // model, optimizer, schedule, timing_only
  int global_batch = 512;
  std::int64_t timing_train_samples = 60000;  // samples per epoch for timing-only runs
  Budget budget;
  std::vector<PolicyConfig> policies;
  int threads = 1;          // intra-op threads for libtorch and OpenBLAS (see README "Threads")
  YAML::Node device_source; // where runtime.device was given (training.device holds its value), for errors
  TrainingBackend training_backend = TrainingBackend::Libtorch;
  std::string surrogate_file;  // runtime.surrogate, resolved against the config's folder
  std::shared_ptr<const env::SurrogateModel> surrogate;  // read and checked against the workload at load time
  YAML::Node surrogate_source;  // where runtime.surrogate was given, for errors
  bool write_rounds = true; // rounds.csv can be large for thousands of workers
  nlohmann::json resolved;  // the config with every default filled in
};

// What the command line overrides in a config (`--seed N`, `--threads N`): applied once, when the
// experiment is resolved (registry/resolved_experiment.hpp), to the config and its resolved copy.
struct Overrides {
  std::optional<std::uint64_t> seed;
  std::optional<int> threads;
};

// Sets the overridden values, and the resolved config's `seed` and `runtime.threads` to what the
// run uses (config.json records them).
void apply_overrides(ExperimentConfig& config, const Overrides& overrides);

// Names a run writes beside its policies' folders (a real run's checkpoints, the figures of
// --plot, the comparison's table): no policy may be labelled so.
inline constexpr const char* kReservedLabels[] = {"checkpoints", "plots", "comparison.md", "comparison.csv"};

// Why `label` cannot name a policy's results folder (common/names.hpp, or a reserved name), or
// nullopt. Every reader of labels asks this one function.
std::optional<std::string> policy_label_problem(const std::string& label);

// Reads and validates a config file. Throws common::ConfigError ("file:line: key: message").
ExperimentConfig load_config(const std::string& path);
ExperimentConfig parse_config(const std::string& yaml_text, const std::string& file_name);

}  // namespace experiments
