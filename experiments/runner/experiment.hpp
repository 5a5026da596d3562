// One experiment driver for `orchestra run` (a simulated cluster) and `orchestra launch` (a real
// one). The experiment comes resolved (registry/resolved_experiment.hpp: overrides applied, sweeps
// expanded, every policy built once); the driver hands each policy to where it runs, an
// ExperimentCluster (simulated_cluster.hpp, real_run.hpp: the only difference between the two),
// which runs it through the one run loop (run_loop.hpp) and hands its outcome to the one
// ResultsWriter (results_writer.hpp). Results per policy: rounds.csv, iterations.csv, epochs.csv,
// evals.csv, summary.json, config.json; and comparison.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"
#include "experiments/registry/resolved_experiment.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/runner/progress.hpp"
#include "experiments/runner/results_writer.hpp"

namespace experiments {

struct RunOptions {
  std::string out_dir;                 // default: results/<experiment name>
  Overrides overrides;                 // --seed, --threads: applied when the experiment is resolved
  bool quiet = false;
  std::vector<std::uint64_t> seeds;    // several seeds: seed_runs.hpp (overrides the config's seeds:)
  int jobs = 1;                        // seeds run at once, in processes (seed_runs.hpp)
  std::string progress_prefix;         // before each progress label: "seed 7 (2/5) " when one run of several
  bool resume = false;                 // a real run: continue from <out>/checkpoints (real_checkpoint.hpp)
};

struct ExperimentResult {
  std::string out_dir;
  std::vector<PolicyOutcome> outcomes;  // empty on a real run's ranks other than 0
  double target_accuracy = 0;
};

// Where an experiment's policies run: a simulated cluster, or this rank of a real one.
class ExperimentCluster {
 public:
  virtual ~ExperimentCluster() = default;
  // Before the first policy and before anything is written: what must hold for the whole
  // experiment (the device, the policies' first plans, the data); throws with one line. May note
  // in the resolved config what the cluster adds to it (a real run's world size and backend).
  virtual void prepare(Experiment& experiment) = 0;
  // Whether this process writes the results (a simulated run; rank 0 of a real one).
  virtual bool writes_results() const = 0;
  // Runs one policy (its object started afresh by the run loop) and hands the outcome, and where
  // the cluster keeps them the outcomes after each epoch, to `writer`.
  virtual void run(const Experiment& experiment, ExperimentPolicy& policy, Progress& progress, ResultsWriter& writer) = 0;
};

// Where the results go: options.out_dir, else results/<name>.
std::string results_dir(const ExperimentConfig& config, const RunOptions& options);

// What run_experiment writes into its folder, for the claim on it
// (experiments/results/results_folder.hpp): the policy folders of `experiment` and what they
// record (the experiment, each policy's keys), and its comparison.md.
FolderPlan run_folder_plan(const Experiment& experiment);

// Validates everything (policies, device, data) before the first file is written; each policy's
// folder appears whole when its run has finished (a real run's also after each epoch).
ExperimentResult run_experiment(Experiment& experiment, ExperimentCluster& cluster, const RunOptions& options);

// A simulated run of `config` (resolved here with options.overrides): for tests and benchmarks.
ExperimentResult run_experiment(ExperimentConfig config, const RunOptions& options);

// Throws common::ConfigError ("file:line: runtime.device: ...") when the device cannot be used here.
void check_device(const ExperimentConfig& config);

}  // namespace experiments
