// How far the surrogate of training can be trusted: the static-T sweep of `orchestra evaluate`
// (and its other controllers: orchestra-lcm, random moves, a learned policy) run on the same
// clusters and seeds with real training and with the surrogate, compared cluster by cluster.
//
// Per cluster and controller, the time to target over seeds is summarized as `orchestra evaluate`
// does: a geometric mean, a run that missed the target counting with its run time (a lower bound),
// and the misses counted. Per cluster:
//   - the best static T of each (the sweep point with the smallest such time) and whether the two
//     are the same point or neighbours in the sweep (the goal: on every cluster);
//   - the time to target at the real best T, real against surrogate (relative error; goal: within
//     10%), and the oracle's time on each side (each at its own best T);
//   - the mean |relative error| over every sweep point, and each other controller's error;
//   - what the surrogate's best T is worth in real training: the real time at it over the real
//     best static T's. Chosen on the surrogate alone, before any real run, one static T per cluster
//     is a baseline a learned controller must beat (issue 41); beside it each other controller's
//     real time over the same best static T, so the two read side by side.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "experiments/analysis/controller_evaluation.hpp"

namespace experiments {

struct ControllerTimes {
  std::string controller;
  double barrier_ms = 0;        // sweep points: T
  double real_s = 0;            // geometric mean over seeds (a miss at its run time)
  double surrogate_s = 0;
  int real_misses = 0, surrogate_misses = 0;
  double real_accuracy = 0, surrogate_accuracy = 0;  // mean final accuracy over seeds
  int seeds = 0;
  double error() const { return surrogate_s / real_s - 1.0; }
};

struct ClusterFidelity {
  std::string cluster;
  std::vector<ControllerTimes> sweep;   // by T
  std::vector<ControllerTimes> others;  // the judged controllers, orchestra-lcm, orchestra-random
  int real_best = -1, surrogate_best = -1;  // indices into sweep
  bool best_same_or_adjacent() const { return real_best >= 0 && surrogate_best >= 0 && std::abs(real_best - surrogate_best) <= 1; }
  double error_at_real_best() const { return sweep[static_cast<std::size_t>(real_best)].error(); }
  double real_oracle_s() const { return sweep[static_cast<std::size_t>(real_best)].real_s; }
  double surrogate_oracle_s() const { return sweep[static_cast<std::size_t>(surrogate_best)].surrogate_s; }
  double oracle_error() const { return surrogate_oracle_s() / real_oracle_s() - 1.0; }
  double sweep_mean_abs_error() const;
  // The surrogate's pick in real training: the real time at its best T over the real best T's
  // (1 where they are one point; a real miss at the pick counts at its run time, as everywhere).
  double pick_over_real_best() const { return sweep[static_cast<std::size_t>(surrogate_best)].real_s / real_oracle_s(); }
};

// A controller's real time over the real best static T, geometric mean over the clusters it ran on.
struct RealOverBestStatic {
  std::string controller;
  double geomean = 1;
  int clusters = 0;
};

struct SurrogateFidelity {
  std::vector<ClusterFidelity> clusters;
  std::vector<std::uint64_t> seeds;
  int best_same_or_adjacent = 0;          // clusters
  int within_10_percent = 0;              // clusters whose error at the real best T is within 10%
  double mean_abs_error_at_best = 0;      // over clusters
  double mean_abs_error_sweep = 0;        // over clusters and sweep points
  // The surrogate's pick in real training (ClusterFidelity::pick_over_real_best), geometric mean
  // over clusters and the worst cluster; then the other controllers the same way, in the order
  // they first appear.
  double pick_over_real_best = 1;
  double pick_worst = 1;
  std::string pick_worst_cluster;
  // A miss counts at its run time, which can be shorter than the real best T's time to target:
  // the real runs at the picks that missed, said beside the geometric mean.
  int pick_real_misses = 0, pick_real_runs = 0;
  std::vector<RealOverBestStatic> others_over_real_best;
};

// Pairs the runs of the two evaluations by cluster, seed and controller (only what both have).
// Throws common::DataError when they share no cluster.
SurrogateFidelity compare_surrogate(const std::vector<ControllerRun>& real, const std::vector<ControllerRun>& surrogate);

// Tables: per cluster the summary, then every sweep point and controller (Markdown); the CSV has
// one row per cluster and controller.
std::string surrogate_fidelity_markdown(const SurrogateFidelity& fidelity);
std::string surrogate_fidelity_csv(const SurrogateFidelity& fidelity);

}  // namespace experiments
