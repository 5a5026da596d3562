// A `cluster.mode: real` experiment on this rank of a process group: every policy of the config in
// turn, each from fresh weights (the config's seed), rank 0 running the policy and writing the
// same results folder as `orchestra run` (rounds.csv, epochs.csv, evals.csv, summary.json,
// config.json, comparison.md), after every epoch, so `compare` reads both and a failed run keeps
// what it finished. Times in the results are measured wall times (sim_time_s = training time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "env/real/communicator.hpp"
#include "common/errors.hpp"
#include "experiments/config/config.hpp"
#include "experiments/runner/experiment.hpp"

namespace experiments {

struct RealRunOptions {
  std::string out_dir;                // default: results/<experiment name>
  bool resume = false;                // continue from <out>/checkpoints (real_checkpoint.hpp)
  bool quiet = false;
  std::optional<std::uint64_t> seed;  // overrides the config's seed
  std::optional<int> threads;         // overrides runtime.threads (per process)
  // Where this rank trains: orchestra worker passes env::rank_device(runtime.device, LOCAL_RANK),
  // the device its communicator was built for; unset, runtime.device as rank_device gives local rank 0.
  std::optional<torch::Device> device;
};

// Throws common::ConfigError when `config` cannot run on `world_size` ranks (not real mode, a worker
// count that differs from the number of processes, timing-only, a runtime.device this machine lacks).
void check_real_config(const ExperimentConfig& config, int world_size);

// Runs on every rank; the outcomes are returned on rank 0 (empty elsewhere).
ExperimentResult run_real_experiment(ExperimentConfig config, env::Communicator& comm, const RealRunOptions& options);

}  // namespace experiments
