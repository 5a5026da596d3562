// `orchestra surrogate calibrate SURROGATE.json CONFIG... --real DIR`: one correction of a fitted
// surrogate, chosen where a barrier controller learns from it: the static-T sweeps of real training.
//
// Why: the fit (surrogate_fit.hpp) matches logged rounds, mostly short ones, and on clusters it
// was not fitted on it charges long periods too much accuracy: over the 8 held-out clusters its
// time error grows by 8-10% per doubling of T (positive on every cluster), and it misses the
// target at long T in 15 runs where real training reaches it (0 the other way round). A
// controller trained on it learns that long barriers do not pay (BENCHMARKS.md, "The surrogate's
// tilt").
//
// The correction: the replicas' drift measured in units `scale` times larger, i.e. both of the
// model's drift scales (d_0 of the progress efficiency e = (1 + d / d_0)^-kappa and d_q of the
// divergence r = (d / d_q)^eta, surrogate_model.hpp) times `scale`, so a long round costs less.
// Each scale of a grid is judged as `orchestra surrogate fidelity` judges a surrogate (the sweep
// on the surrogate against the real sweep of the same clusters and seeds), and the one chosen
// finds the real best static T (or an adjacent one) on the most clusters, then has the lowest
// mean |relative error| over every sweep point. Choose on validation clusters, judge on others.
//
// A second correction, crossed with the first when asked (`steps_gains`): the accuracy's gain per
// ln(1 + local steps) of the round that made the model (AccuracyMap::steps_gain, above
// `steps_reference` steps). The fit's accuracy is the loss's alone, and real averages of long
// rounds classify better than their loss says: on comm_bound_1g the fit's accuracy at the loss of
// a 2.8 s barrier is 0.6 points below real training's, and a controller trained on it never climbs
// there (BENCHMARKS.md, "The surrogate's tilt").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/surrogate/surrogate_model.hpp"
#include "experiments/surrogate/fidelity_run.hpp"
#include "experiments/surrogate/surrogate_fidelity.hpp"

namespace experiments {

struct SurrogateCalibrationOptions {
  // The fitted file, the configs, seeds, policy, real evaluations (`real_from`; empty: run once,
  // in the first scale's folder), jobs and quiet, as for `surrogate fidelity`; its out_dir unused.
  FidelityRunOptions fidelity;
  std::vector<double> scales{1.0, 1.1, 1.2, 1.3, 1.4, 1.5};
  std::vector<double> steps_gains{0.0};  // each crossed with every scale
  double steps_reference = 8;
  std::string work_dir = "results/surrogate-calibration";  // one fidelity folder per grid point
  std::string out = "surrogate-calibrated.json";
};

// How one scale did on the configs (from its SurrogateFidelity).
struct CalibrationPoint {
  double scale = 1;
  double steps_gain = 0;
  int clusters = 0;
  int best_same_or_adjacent = 0;
  double mean_abs_error_sweep = 0;
  int surrogate_only_misses = 0;  // runs (cluster, T, seed) that missed on the surrogate, at a T where every real seed reached
  int real_only_misses = 0;       // and the other way round
};

struct SurrogateCalibrationResult {
  std::vector<CalibrationPoint> points;   // scales outer, steps gains inner, in the options' order
  std::size_t chosen = 0;
  env::SurrogateModel model;              // the fitted model with the chosen scale and gain
};

// `model` with both drift scales times `scale` (> 0).
env::SurrogateModel with_drift_scale(const env::SurrogateModel& model, double scale);
// ... and the accuracy's steps gain set (any finite number; 0: the fit's map).
env::SurrogateModel with_calibration(const env::SurrogateModel& model, double scale, double steps_gain, double steps_reference);

// The point of `fidelity`'s comparison at `scale`.
CalibrationPoint calibration_point(double scale, const SurrogateFidelity& fidelity);

// The most clusters with the best static T the same or adjacent, then the lowest mean |error|,
// then the scale nearest 1 (the fit as it is), then the smallest |steps gain|. Throws
// std::invalid_argument for no points.
std::size_t choose_calibration(const std::vector<CalibrationPoint>& points);

// Runs the grid (the real evaluation once at most) and writes options.out: the chosen model, its
// "fit" report kept, with "calibration": {the grid's points, the chosen scale, configs, real runs}.
// Throws common::UsageError / ConfigError / DataError before any run for bad options or files.
SurrogateCalibrationResult calibrate_surrogate(const SurrogateCalibrationOptions& options);

// One Markdown table of the grid, the chosen row marked.
std::string calibration_markdown(const SurrogateCalibrationResult& result);

}  // namespace experiments
