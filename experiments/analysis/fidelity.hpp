// How far the simulator is from reality: a real run (orchestra launch) against its calibrated
// simulation (orchestra calibrate, then orchestra run), policy by policy. `orchestra compare
// REAL_DIR --sim SIM_DIR` prints it; the fidelity experiment (scripts/fidelity.sh) tabulates it.
//
// Epoch time is each epoch's length on the run's clock (the difference of epochs.csv's clock
// between consecutive epochs): wall time spent training for the real run, the cost model's time
// for the simulated one; neither counts evaluation. The relative error of an epoch is
// (simulated - real) / real; a policy's error is the mean of its epochs' absolute errors, and the
// mean absolute error of the comparison is over every epoch of every policy present in both runs.
//
// Several real runs of one experiment (`orchestra compare REAL_DIR REAL2_DIR ... --sim SIM_DIR`):
// the simulation is compared with their mean, epoch by epoch, and a ranking is judged only on the
// pairs of policies that every real run orders the same way. Two policies whose order changes from
// one real run to the next are within this machine's noise: no simulation can be right or wrong
// about them, and the table names them.
//
// The same table between two real runs of one experiment (`orchestra compare REAL_DIR --repeat
// REAL2_DIR`) measures how far one run of this machine is from the next: a simulation cannot be
// expected to match a single real run more closely than a second real run does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiments/results/results_reader.hpp"

namespace experiments {

// What the real run is compared with: its calibrated simulation, or a second real run of the same
// experiment (the run-to-run floor).
enum class FidelityReference { Simulation, RepeatRun };

struct FidelityRow {
  std::string label;
  std::vector<double> real_epoch_s;  // per epoch (only the epochs every run has); several real runs: their mean
  std::vector<double> sim_epoch_s;
  double mean_real_epoch_s = 0;
  double mean_sim_epoch_s = 0;
  double mean_abs_error = 0;   // mean over epochs of |sim - real| / real
  double worst_epoch_error = 0;  // the largest |sim - real| / real of an epoch
  std::optional<double> real_time_to_target_s;  // several real runs: the mean of those that reached it
  std::optional<double> sim_time_to_target_s;
  std::optional<double> time_to_target_error;  // (sim - real) / real, when both reached the target
};

struct FidelityReport {
  FidelityReference reference = FidelityReference::Simulation;  // what the sim_* fields hold
  std::vector<FidelityRow> rows;     // the real run's policy order
  std::vector<std::string> unmatched;  // labels found in only one of the runs
  double mean_abs_error = 0;         // over every epoch of every row
  double worst_policy_error = 0;     // the largest row mean_abs_error
  // Policies ordered by mean epoch time (fastest first) and by time to target (those that missed
  // it last, in label order), in each run; the rankings agree when the orders are equal.
  std::vector<std::string> real_by_epoch_time, sim_by_epoch_time;
  std::vector<std::string> real_by_time_to_target, sim_by_time_to_target;
  // Pairs "a/b" of policies: those the real runs do not all order the same way (or tie), and those
  // they all order alike but the other run orders the other way round.
  std::vector<std::string> epoch_pairs_in_doubt, target_pairs_in_doubt;
  std::vector<std::string> epoch_pairs_reversed, target_pairs_reversed;
  bool epoch_ranking_agrees = false;   // no pair reversed
  bool target_ranking_agrees = false;
  int real_runs = 1;
};

// Throws common::DataError when `real` is not a real run, `sim` not a simulated one (with
// RepeatRun: not a real one), they share no policy label, or a label's folders record (config.json,
// where both are readable) other data, model, training or policy keys: another experiment's times.
FidelityReport compare_fidelity(const RunResults& real, const RunResults& sim,
                                FidelityReference reference = FidelityReference::Simulation);
// The simulation against several real runs of one experiment (their mean; see above). The same
// errors as above, and a DataError when the real runs do not all have the simulation's policies.
FidelityReport compare_fidelity(const std::vector<RunResults>& reals, const RunResults& sim);

// A Markdown table, one row per policy, then the summary lines (errors, rankings); the second
// run's columns say "sim" or "repeat".
std::string fidelity_markdown(const FidelityReport& report);

}  // namespace experiments
