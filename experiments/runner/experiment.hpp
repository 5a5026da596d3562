// `orchestra run`: every policy of an experiment on the same cluster, data and seed; results per
// policy (rounds.csv, epochs.csv, evals.csv, summary.json, config.json) and a comparison table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/runner/run_loop.hpp"

namespace experiments {

struct RunOptions {
  std::string out_dir;                 // default: results/<experiment name>
  std::optional<std::uint64_t> seed;   // overrides the config's seed
  std::optional<int> threads;          // overrides runtime.threads
  bool quiet = false;
  std::vector<std::uint64_t> seeds;    // several seeds: seed_runs.hpp (overrides the config's seeds:)
  int jobs = 1;                        // seeds run at once, in processes (seed_runs.hpp)
  std::string progress_prefix;         // before each progress label: "seed 7 (2/5) " when one run of several
};

// Where `orchestra run` writes: --out, else results/<name>.
std::string results_dir(const ExperimentConfig& config, const RunOptions& options);

// What run_experiment(config, options) writes into its folder, for the claim on it
// (experiments/results/results_folder.hpp): the policy folders of `config` with its seed and
// sweeps expanded, and what they record.
FolderPlan run_folder_plan(ExperimentConfig config, const RunOptions& options);

struct ExperimentResult {
  std::string out_dir;
  std::vector<PolicyOutcome> outcomes;
  double target_accuracy = 0;
};

// Validates everything (policies, data) before the first file is written; each policy's folder
// appears whole, when its run has finished.
ExperimentResult run_experiment(ExperimentConfig config, const RunOptions& options);

// Throws common::ConfigError ("file:line: runtime.device: ...") when the device cannot be used here.
void check_device(const ExperimentConfig& config);

// The table printed at the end of a run (and written as comparison.md): analysis/comparison.hpp.
std::string comparison_table(const std::vector<PolicyOutcome>& outcomes, double target_accuracy);

// summary.json of `outcome` with its speedup over the reference among `done` (speedup.hpp).
nlohmann::json summary_of(const std::vector<PolicyOutcome>& done, const PolicyOutcome& outcome, double target_accuracy);
// Rewrites every policy's summary.json once all have run, against the final reference.
void write_final_summaries(const std::string& out_dir, const std::vector<PolicyOutcome>& outcomes, double target_accuracy);

}  // namespace experiments
