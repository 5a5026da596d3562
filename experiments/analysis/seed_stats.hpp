// Evidence over seeds: the same experiment run with several seeds (`orchestra run --seeds`), one
// results folder per seed (DIR/seed-<N>/), summarized per policy as mean, standard deviation and
// 95% confidence interval, with the speedup over the reference as a paired ratio (per seed, then
// its mean and CI). `orchestra run --seeds` writes it and `orchestra compare` on the same folder
// prints the same.
#pragma once

#include <string>
#include <vector>

#include "env/round_cluster.hpp"
#include "experiments/results/results_reader.hpp"

namespace experiments {

// Student's t at 97.5% for `df` degrees of freedom (two-sided 95%); the table to 30, then the
// Cornish-Fisher expansion around the normal quantile (within 1e-4 of the exact value above 30).
double t_critical_95(int df);

// Of a sample: n, mean, sample standard deviation, and the half-width of the 95% CI of the mean
// (t_critical_95(n - 1) * sd / sqrt(n)). sd and ci95 are NaN for fewer than two values, mean for none.
struct Spread {
  int n = 0;
  double mean = 0, sd = 0, ci95 = 0;
};
Spread spread_of(const std::vector<double>& values);

struct SeedRow {
  std::string label;
  std::string policy;
  int seeds = 0;    // runs of this policy
  int reached = 0;  // of them, those that reached the target
  double target_accuracy = 0;
  Spread time_to_target_s;  // over the seeds that reached the target
  Spread final_accuracy;
  Spread epoch_time_s;      // the run's clock over its epochs, per seed
  Spread speedup;           // per seed: reference's time to target / this one's, both reached
  std::string reference;    // the reference's label (dsgd if present, else the first policy)
  env::ClockKind clock = env::ClockKind::Simulated;
};

// True when every run is named seed-<N> and there are at least two: the folder of a multi-seed run.
bool is_seed_folder(const std::vector<RunResults>& runs);

// Throws common::DataError when the seeds' folders are not one experiment's: the configs their
// policy folders record (config.json, as experiment_identity reads it) differ in more than the seed,
// or one label ran with other policy keys in another seed. Pooling them would report, as the spread
// over seeds, the difference between two experiments (two folders seed-1 and seed-2 of runs with
// other targets were summarized as one). Policy folders without a readable config.json are not checked.
void check_one_experiment(const std::vector<RunResults>& seeds);

// One row per policy label, in the order of the first seed's run.
std::vector<SeedRow> seed_rows(const std::vector<RunResults>& runs);

// "| policy | seeds reached | time to 85.0% (s) | sd | paired speedup vs dsgd | final acc | epoch time (s) |"
// with each cell "mean ± ci95".
std::string seed_markdown(const std::vector<SeedRow>& rows);
std::string seed_csv(const std::vector<SeedRow>& rows);
constexpr const char* kSeedComparisonCsvMarker = "label,policy,";  // how seed_csv begins

}  // namespace experiments
