// A static barrier for each cluster picked on the surrogate of training before any real run
// (`orchestra surrogate pick`): `orchestra evaluate`'s static-T sweep run on the surrogate, and per
// cluster the sweep point it finds best. On the sixteenth held-out suite that pick took 1.030x the
// real best static T in real training, against 1.052x for the shipped learned controller
// (BENCHMARKS.md, "A static T chosen on the surrogate"): the baseline a learned controller must beat.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "experiments/analysis/controller_evaluation.hpp"
#include "experiments/surrogate/fidelity_run.hpp"

namespace experiments {

// The sweep's best point among (misses, time) pairs: the fewest misses first (a missed run's time is
// its run time, only a lower bound of its time to target), then the shortest time; the first of
// equals. The rule `orchestra surrogate fidelity` reads each side's best T with. Requires a point.
std::size_t best_sweep_point(const std::vector<std::pair<int, double>>& misses_and_times);

struct SweepPointTime {
  double barrier_ms = 0;
  std::string controller;  // its label, fixed-t-T_ms=...
  double time_s = 0;       // geometric mean over seeds, a miss at its run time
  int misses = 0;
  int seeds = 0;
};

struct StaticPick {
  std::string cluster;
  std::vector<SweepPointTime> sweep;  // by T
  std::size_t chosen = 0;             // into sweep
  const SweepPointTime& pick() const { return sweep[chosen]; }
};

// Per cluster of an evaluation's runs (its sweep only; the other controllers are ignored), in
// cluster order. Throws common::DataError when no run is a sweep point.
std::vector<StaticPick> pick_static_barriers(const std::vector<ControllerRun>& runs);

std::string static_picks_markdown(const std::vector<StaticPick>& picks);
std::string static_picks_csv(const std::vector<StaticPick>& picks);

struct PickRunResult {
  std::vector<StaticPick> picks;
  std::string surrogate_dir;       // the sweep's runs on the surrogate
  std::vector<std::string> files;  // pick.md, pick.csv
};

// `orchestra surrogate pick SURROGATE.json CONFIG...`: fidelity's surrogate side alone (no real
// run; options.real_from must be empty), then the picks, written as DIR/pick.md and DIR/pick.csv.
PickRunResult run_surrogate_pick(const FidelityRunOptions& options);

}  // namespace experiments
