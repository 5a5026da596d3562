// What one policy's run produced: its epochs, evaluations and totals, as the run loop fills them in
// and the results files record them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "env/round_cluster.hpp"
#include "env/round_plan.hpp"

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
  double sim_time_s = 0;                 // the run's clock at the end (wall time in a real run)
  env::ClockKind clock = env::ClockKind::Simulated;  // what sim_time_s and every clock_s measure
  std::int64_t rounds = 0;
  double mean_straggler_effect = 0;      // over all rounds
  double mean_utilization = 0;           // busy / (N * elapsed) over the whole run
  std::vector<double> idle_s_per_worker; // total idle per worker
  double wall_seconds = 0;               // not deterministic; kept out of the CSV files
  std::string rounds_csv;                // per round and worker (empty if disabled)
  std::string iterations_csv;            // per round, wide (round_csv.hpp; empty if disabled)
};

}  // namespace experiments
