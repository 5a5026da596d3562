// `orchestra launch`'s cluster: this rank of a `cluster.mode: real` run's process group. Every
// policy runs from fresh weights (the config's seed); rank 0 runs the policy through the run loop
// on an env::RealCluster (it broadcasts each plan, gathers every rank's measured times) and hands
// the outcome to the ResultsWriter after every epoch, so `compare` reads it like a simulated run's
// and a failed run keeps what it finished; a checkpoint after every epoch lets `--resume` go on.
// The other ranks follow (env::follow_policy). Times are measured wall times (wall_time_s).
#pragma once

#include <optional>

#include "env/real/communicator.hpp"
#include "env/train/dataset.hpp"
#include "experiments/runner/experiment.hpp"

namespace experiments {

// Throws common::ConfigError when `config` cannot run on `world_size` ranks (not real mode, a worker
// count that differs from the number of processes, timing-only, a runtime.device this machine lacks).
void check_real_config(const ExperimentConfig& config, int world_size);

class RealRunCluster : public ExperimentCluster {
 public:
  // `device`: where this rank trains; orchestra worker passes env::rank_device(runtime.device,
  // LOCAL_RANK), the device its communicator was built for (unset: local rank 0's).
  // `out_dir` and `resume`: where the checkpoints are, and whether to continue from them.
  RealRunCluster(env::Communicator& comm, std::string out_dir, bool resume, std::optional<torch::Device> device = std::nullopt);

  // Checks the config against the group, notes the group in the resolved config ("real": world
  // size, backend, timeout) and loads the data set on this rank's device.
  void prepare(Experiment& experiment) override;
  bool writes_results() const override { return comm_.rank() == 0; }
  void run(const Experiment& experiment, ExperimentPolicy& policy, Progress& progress, ResultsWriter& writer) override;

 private:
  env::Communicator& comm_;
  std::string out_dir_;
  bool resume_;
  std::optional<torch::Device> requested_device_;
  torch::Device device_{torch::kCPU};
  std::shared_ptr<const env::DatasetPair> data_;
};

// Every rank: resolves `config` with options.overrides and runs it on `comm` (convenience for
// tests); the outcomes are returned on rank 0 (empty elsewhere).
ExperimentResult run_real_experiment(ExperimentConfig config, env::Communicator& comm, const RunOptions& options,
                                     std::optional<torch::Device> device = std::nullopt);

}  // namespace experiments
