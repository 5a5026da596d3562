// `orchestra evaluate POLICY.pt... CONFIG... --seeds 1-3`: every trained policy, orchestra-lcm, a
// random controller and a log-spaced sweep of static barriers (fixed-t) on each cluster config and
// seed, then the judgement of analysis/controller_evaluation.hpp.
//
// Per cluster config the experiment's own workload (data, model, training, budget) and cluster are
// kept, its epochs and target replaced where the options say, and its policies replaced by the
// evaluation's, written as DIR/<cluster>/evaluate.yaml and run with `orchestra run --seeds`
// (seed_runs.hpp: DIR/<cluster>/seed-<N>/<controller>/). Every run stops at the target
// (training.stop_at_target), since only the time to it is judged.
//
// The sweep: `sweep_points` values of T, log-spaced from the slowest worker's batch time (every
// worker takes at least one step) to 64 times it (every worker at the controller's step cap), from
// the config's time models at B / N; or the values given. The sweep and the random controller use the
// first policy's recorded move and decision interval, so that the static barriers re-estimate
// tau_n as often as the learned controller does and only the choice of T differs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/analysis/controller_evaluation.hpp"
#include "experiments/analysis/plots.hpp"
#include "experiments/config/config.hpp"
#include "experiments/config/workload_change.hpp"

namespace experiments {

struct EvaluateOptions {
  std::vector<std::string> policies;   // policy.pt files (judged as orchestra-a3c, or a3c:<name> when several)
  std::vector<std::string> configs;    // cluster experiment configs
  std::vector<std::uint64_t> seeds{1, 2, 3};
  int sweep_points = 8;
  std::vector<double> sweep_ms;        // explicit sweep values instead (ms)
  std::string out_dir = "results/evaluate";
  int jobs = 1;
  bool quiet = false;
  bool plot = false;  // DIR/plots/evaluation and barrier_vs_oracle (PNG, SVG and the gnuplot script)
  bool overwrite = false;  // DIR holds another evaluation's or experiment's results: remove them (results_folder.hpp)
  // An earlier evaluation's folder: its clusters, seeds and sweep are taken, the runs of
  // orchestra-lcm, the random controller and the sweep copied from it, and only the policies run
  // (no configs then). Judging several candidates on one suite pays for the sweep once.
  std::string baselines_from;
  // More controllers judged beside the policies, as YAML policy entries, e.g.
  // "{name: fixed-t, label: t-is-comm, T_x_comm: 1}"; a fixed-t or planned-t without interval:
  // gets the first policy's decision interval, as the sweep does. With baselines_from they run too.
  std::vector<std::string> also;
  // Every config's epochs and target replaced (evaluate.yaml records what ran).
  WorkloadChange workload;
};

struct EvaluationResult {
  std::string out_dir;
  std::vector<ControllerRun> runs;
  EvaluationSummary summary;
  std::vector<std::string> figures;  // with plot: the images drawn
};

// The sweep of static barriers for `config` (see above).
std::vector<double> barrier_sweep(const ExperimentConfig& config, int points);

// The label under which policy `index` of `paths` is judged.
std::string policy_label(const std::vector<std::string>& paths, std::size_t index);

// Runs everything, writes the tables (write_evaluation_tables) and returns the judgement.
// Throws common::ConfigError for an unreadable config or policy, and with baselines_from for
// baselines that ran with other moves or decision interval than the first policy records, before
// anything runs.
EvaluationResult run_evaluation(const EvaluateOptions& options);

// Writes DIR/evaluation.md, DIR/evaluation.csv (per cluster, seed and controller) and
// DIR/evaluation_overall.csv (per controller, with the 95% intervals), each atomically; returns
// their names.
std::vector<std::string> write_evaluation_tables(const std::string& out_dir, const EvaluationSummary& summary,
                                                 const std::vector<ControllerRun>& runs);

// Draws, into options.out_dir (default DIR/plots), evaluation (every judged controller over the
// oracle, per cluster) and barrier_vs_oracle (`controller`'s T over its run on each cluster's first
// seed against the oracle's T), from the evaluation in DIR; returns the images written. A figure
// with nothing to draw (no controller reached the target; no cluster with an oracle) is left out.
// Throws common::PlotError without gnuplot.
std::vector<std::string> plot_evaluation(const std::string& evaluation_dir, const EvaluationSummary& summary, const std::string& controller,
                                         PlotOptions options = {});

// Reads an evaluation's folder back (DIR/<cluster>/seed-<N>/<controller>/summary.json and the
// sweep values of DIR/<cluster>/evaluate.yaml): `orchestra compare` on it, and the tests.
std::vector<ControllerRun> read_evaluation_runs(const std::string& out_dir);

}  // namespace experiments
