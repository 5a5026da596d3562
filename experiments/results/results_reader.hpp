// Reads back what `orchestra run` wrote (results_files.hpp), for `orchestra compare` and the plots.
// A results directory is one of:
//   - a policy folder (it holds summary.json),
//   - an experiment folder (its sub-folders are policy folders: results/quickstart),
//   - a folder of experiments (results/), each read as one run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/round_cluster.hpp"

namespace experiments {

// A row of epochs.csv.
struct EpochRow {
  int epoch = 0;  // from 1
  double sim_time_s = 0;
  double accuracy = 0;
  double loss = 0;
  double straggler_effect = 0;
  double utilization = 0;
};

// A row of evals.csv: one test evaluation.
struct EvalRow {
  std::int64_t round = 0;
  int epoch = 0;
  double sim_time_s = 0;
  double accuracy = 0;
  double loss = 0;
};

// One policy's folder. Numbers that summary.json leaves out (or writes as null) read as NaN.
struct PolicyResults {
  std::string dir;     // the folder
  std::string label;   // names the folder; from summary.json, else the folder's name
  std::string policy;  // its kind: dsgd, lbb, orchestra-lcm, ...
  double target_accuracy = 0;
  std::optional<double> time_to_target_s;
  bool timing_only = false;  // a timing-only run: no accuracy
  double final_accuracy = 0;
  double final_loss = 0;
  double sim_time_s = 0;      // the run's clock at the end: sim_time_s or wall_time_s in summary.json
  env::ClockKind clock = env::ClockKind::Simulated;
  std::int64_t epochs = 0;
  std::int64_t rounds = 0;
  std::optional<std::int64_t> run_index;  // its place among the experiment's policies (summary.json), from 0
  double mean_straggler_effect = 0;
  double mean_utilization = 0;
  std::vector<double> idle_s_per_worker;
  std::vector<EpochRow> epoch_rows;
  std::vector<EvalRow> evals;
  std::string rounds_csv;      // path of rounds.csv, empty if the run did not write it (it can be large: read on demand)
  std::string iterations_csv;  // path of iterations.csv (LBB's wide per-iteration table), empty if absent
};

// One experiment's folder.
struct RunResults {
  std::string dir;
  std::string name;                     // the folder's name
  std::vector<PolicyResults> policies;  // in the order the experiment ran them
  std::string train_csv;                // an A3C training log (train.csv) in the folder or a policy folder, if any
};

// A folder of results that read_results did not read as part of a run, and why: a multi-seed run
// or an evaluation among experiments, a seed's folder beside policy folders.
struct SkippedFolder {
  std::string dir;
  std::string reason;
};

// Reads every results directory given; what it passes over is added to `skipped` (when given).
// Throws common::DataError with the path when a directory does not exist, holds no results (saying
// what it holds instead), or a results file is malformed, truncated (fewer epochs than its
// summary.json says) or out of range (an accuracy above 1, a negative time, a label that is a path).
std::vector<RunResults> read_results(const std::vector<std::string>& dirs, std::vector<SkippedFolder>* skipped = nullptr);

// One policy folder (throws common::DataError).
PolicyResults read_policy_folder(const std::string& dir);

}  // namespace experiments
