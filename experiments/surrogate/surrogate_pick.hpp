// A static barrier for each cluster picked on the surrogate of training before any real run
// (`orchestra surrogate pick`): `orchestra evaluate`'s static-T sweep run on the surrogate, on
// planning seeds the judged runs do not use, and per cluster the sweep point it finds best; with
// real evaluations of the same configs, that pick judged there like any controller (BENCHMARKS.md,
// "A static T chosen on the surrogate"): the baseline a learned controller must beat.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/analysis/controller_evaluation.hpp"
#include "experiments/registry/planned_barrier.hpp"
#include "experiments/surrogate/fidelity_run.hpp"

namespace experiments {

// A sweep point over its seeds, as best_sweep_point compares them.
struct SweepPointScore {
  int misses = 0;
  double time_s = 0;    // geometric mean over seeds, a miss at its run time
  double accuracy = 0;  // mean final accuracy over seeds
};

// The sweep's best point: the fewest misses first; among points that no seed missed, the shortest
// time; among points that missed as often, the highest accuracy (the closest to the target: a
// missed run's time is its run time, only a lower bound of its time to target, and the shortest
// of those is the run that stopped soonest, not the one nearest the target), then the shortest
// time; the first of equals. The rule `orchestra surrogate fidelity` reads each side's best T with.
// Requires a point.
std::size_t best_sweep_point(const std::vector<SweepPointScore>& points);

struct SweepPointTime {
  double barrier_ms = 0;
  std::string controller;  // its label, fixed-t-T_ms=...
  double time_s = 0;       // geometric mean over seeds, a miss at its run time
  double accuracy = 0;     // mean final accuracy over seeds
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

// The label the pick is judged under beside an evaluation's controllers.
inline constexpr const char* kSurrogatePick = "surrogate-pick";

// The pick judged in real training: per cluster and seed of `real` (an evaluation of the same
// configs), a copy of its sweep run at the picked T, labelled kSurrogatePick and judged like any
// controller. Throws common::DataError for a cluster with no pick, or whose runs lack the picked
// T (an evaluation of other configs or another workload).
std::vector<ControllerRun> picked_runs(const std::vector<StaticPick>& picks, const std::vector<ControllerRun>& real);

// The default planning seeds (default_planning_seeds, 101-110, registry/planned_barrier.hpp, shared
// with the planned-t policy): none of them is one `orchestra evaluate` runs by default (1-3). In
// the simulated cluster a seed fixes each worker's batch-time noise and the data order, so a pick
// planned on the seeds it is judged on has seen them.

struct PickRunResult {
  std::vector<StaticPick> picks;
  std::string surrogate_dir;       // the sweep's runs on the surrogate
  std::vector<std::string> files;  // pick.md, pick.csv; with real evaluations, judged.md, judged.csv
  std::optional<EvaluationSummary> judged;
};

// `orchestra surrogate pick SURROGATE.json CONFIG... [--real DIR]...`: fidelity's surrogate side
// alone, then the picks, written as DIR/pick.md and DIR/pick.csv. With real evaluations of the
// same configs (options.real_from), the pick judged in them beside their controllers (as
// `orchestra evaluate` judges: over the oracle, paired with each reference), written as
// DIR/judged.md and DIR/judged.csv; a planning seed that the real evaluations ran is refused
// (common::UsageError) before anything runs.
PickRunResult run_surrogate_pick(const FidelityRunOptions& options);

}  // namespace experiments
