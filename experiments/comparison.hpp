// The comparison `orchestra compare` prints and writes: one row per policy of each run, with its
// time to target accuracy and the speedup that buys over the run's `dsgd` (else its first policy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results_reader.hpp"

namespace experiments {

struct ComparisonRow {
  std::string run;     // the experiment folder's name
  std::string label;   // the policy's label (its results folder)
  std::string policy;  // its kind
  double target_accuracy = 0;
  std::optional<double> time_to_target_s;  // empty: never reached the target
  bool timing_only = false;                // no accuracy: the speedup compares time per epoch
  std::optional<double> speedup;           // speedup.hpp: reference's time to target / this one's (per epoch if timing-only)
  std::string reference;                   // the label speedup is measured against
  double final_accuracy = 0;
  double final_loss = 0;
  double mean_straggler_effect = 0;
  double mean_utilization = 0;
  double mean_idle_s_per_worker = 0;  // the mean over workers of each one's total idle time
  std::int64_t epochs = 0;
  double sim_time_s = 0;
};

std::vector<ComparisonRow> comparison_rows(const std::vector<RunResults>& runs);

// A Markdown table (GitHub pipes); a `run` column comes first when the rows span several runs.
// Missing values print as "-", a missed target as "not reached", a timing-only run's as "timing only".
std::string comparison_markdown(const std::vector<ComparisonRow>& rows);

// The same as CSV, every column always present; a missing value is an empty cell.
std::string comparison_csv(const std::vector<ComparisonRow>& rows);

}  // namespace experiments
