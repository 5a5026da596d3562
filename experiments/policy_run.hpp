// One policy's run on the experiment's cluster, data and seed, and what it produced.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "env/barrier_policy.hpp"
#include "env/dataset.hpp"
#include "experiments/config.hpp"
#include "experiments/progress.hpp"

namespace experiments {

struct EvalPoint {
  std::int64_t round = 0;  // rounds done when evaluated
  int epoch = 0;           // epochs done when evaluated (an epoch-end point has epoch = its index + 1)
  double clock_s = 0;
  double accuracy = 0;
  double loss = 0;
};

struct PolicyOutcome {
  std::string label;
  std::string kind;
  nlohmann::json params;                 // resolved policy parameters
  std::vector<env::EpochReport> epochs;
  std::vector<EvalPoint> evals;          // every evaluation, in clock order
  std::optional<double> time_to_target_s;
  bool timing_only = false;              // training.timing_only: no accuracy, speedups per epoch (speedup.hpp)
  double final_accuracy = 0;
  double final_loss = 0;
  double sim_time_s = 0;
  std::int64_t rounds = 0;
  double mean_straggler_effect = 0;      // over all rounds
  double mean_utilization = 0;           // busy / (N * elapsed) over the whole run
  std::vector<double> idle_s_per_worker; // total idle per worker
  double wall_seconds = 0;               // not deterministic; kept out of the CSV files
  std::string rounds_csv;                // per round and worker (empty if disabled)
  std::string iterations_csv;            // per round, wide (round_csv.hpp; empty if disabled)
};

// Trains with `policy` until the budget is spent. `data` is null for timing-only runs.
PolicyOutcome run_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy,
                         std::shared_ptr<const env::DatasetPair> data, Progress& progress);

}  // namespace experiments
