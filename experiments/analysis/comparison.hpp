// The one comparison table: `orchestra run` and `launch` print it at the end of a run (and write it
// as comparison.md), `orchestra compare` prints and writes it for finished runs. One row per
// policy of each run, with its time to target accuracy and the speedup over the run's `dsgd`
// (else its first policy: speedup.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results/policy_outcome.hpp"
#include "experiments/results/results_reader.hpp"

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
  double sim_time_s = 0;                             // the run's clock at the end
  double epochs_time_s = 0;                          // the clock when its last whole epoch ended
  env::ClockKind clock = env::ClockKind::Simulated;  // what that clock measured
};

std::vector<ComparisonRow> comparison_rows(const std::vector<RunResults>& runs);
// The rows of a run just finished, named `run`.
std::vector<ComparisonRow> comparison_rows(const std::string& run, const std::vector<PolicyOutcome>& outcomes,
                                           double target_accuracy);

// The clock (s) when the run's last whole epoch ended, 0 without one (the clock at the end for a
// folder without epochs.csv). A run that a time budget (training.max_sim_seconds) stopped inside
// an epoch spent time on samples no epoch counts: per-epoch figures divide this, not the clock
// at the end, by the epochs.
double whole_epochs_time_s(const PolicyOutcome& outcome);
double whole_epochs_time_s(const PolicyResults& results);

// Speedup of `outcome` over `reference` (speedup.hpp's rule).
std::optional<double> speedup(const PolicyOutcome& reference, const PolicyOutcome& outcome);

// A Markdown table (GitHub pipes); a `run` column comes first when the rows span several runs. The
// last column is the clock: "sim time (s)", "wall time (s)" for real runs, "time (s)" when mixed.
// Missing values print as "-", a missed target as "not reached", a timing-only run's as "timing only".
std::string comparison_markdown(const std::vector<ComparisonRow>& rows);

// The same as CSV, every column always present; a missing value is an empty cell.
std::string comparison_csv(const std::vector<ComparisonRow>& rows);

}  // namespace experiments
