// `orchestra run`: every policy of an experiment on the same cluster, data and seed; results per
// policy (rounds.csv, epochs.csv, evals.csv, summary.json, config.json) and a comparison table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiments/config.hpp"
#include "experiments/policy_run.hpp"

namespace experiments {

struct RunOptions {
  std::string out_dir;                 // default: results/<experiment name>
  std::optional<std::uint64_t> seed;   // overrides the config's seed
  std::optional<int> threads;          // overrides runtime.threads
  bool quiet = false;
};

struct ExperimentResult {
  std::string out_dir;
  std::vector<PolicyOutcome> outcomes;
  double target_accuracy = 0;
};

// Validates everything (policies, data) before the first file is written; each policy's folder
// appears whole, when its run has finished.
ExperimentResult run_experiment(ExperimentConfig config, const RunOptions& options);

// The table printed at the end of a run (and written as comparison.md).
std::string comparison_table(const std::vector<PolicyOutcome>& outcomes, double target_accuracy);

// Speedup of `outcome` over `reference` in time to target accuracy (empty if either missed it).
std::optional<double> speedup(const PolicyOutcome& reference, const PolicyOutcome& outcome);

}  // namespace experiments
