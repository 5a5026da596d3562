// The gnuplot scripts of the figures a comparison needs. Each holds its data inline (datablocks)
// and sets no terminal (gnuplot.hpp renders it as PNG and SVG). Pure functions of the results,
// so they are tested without gnuplot.
#pragma once

#include <string>
#include <vector>

#include "common/csv_table.hpp"
#include "experiments/analysis/controller_evaluation.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/results/round_series.hpp"

namespace experiments {

// How every figure's script begins: a script that does not is not ours to replace (plots.cpp).
inline constexpr const char* kFigureScriptMarker = "# Made by `orchestra compare --plot`.";

struct Figure {
  std::string name;    // file name without extension: accuracy_vs_time, <label>.iterations, ...
  std::string title;   // the figure's title as drawn
  std::string script;  // the gnuplot script
  std::vector<std::string> series;  // the series' titles as drawn in the key
};

struct FigureOptions {
  std::size_t max_workers = 16;  // per-worker figures draw the first this many workers
  std::size_t max_points = 2000; // longer series are averaged over buckets of rounds (an SVG stays small)
};

// Test accuracy against simulated time for every policy of a run (Orchestra Fig. 3); a dashed line
// marks the target accuracy.
Figure accuracy_figure(const RunResults& run, const std::string& name);

// For timing-only runs, which have no accuracy: simulated time at the end of each epoch, every
// policy, from (0, 0); the slope is the time per epoch, and the first segment also holds the time
// spent before the first epoch (LBB's profiling, Alg. 1).
Figure epoch_time_figure(const RunResults& run, const std::string& name);

// Per-worker compute time and batch size, and the straggler effect, per round (LBB Fig. 7).
Figure iterations_figure(const PolicyResults& policy, const RoundSeries& rounds, const std::string& name,
                         const FigureOptions& options);

// The barrier T and each worker's local steps tau_n per epoch (Orchestra's policies: each
// epoch's mean over its rounds, T being chosen at the start of the epoch).
Figure barrier_figure(const PolicyResults& policy, const RoundSeries& rounds, const std::string& name,
                      const FigureOptions& options);

// One policy's lane group in the timeline figure.
struct TimelinePanel {
  std::string label;
  const RoundSeries* rounds = nullptr;  // needs round_ms and clock_ms (rounds.csv)
  std::string note;                     // after the label in the panel's title: "compute 81%, idle 6%, ..."
};

// Where the time goes, per worker: from each policy's first round, boxes for computing, idle
// (waiting for the slowest at the barrier) and communicating, round after round, on one time axis
// for every policy (at most 6 panels of at most 8 workers). The window shows about three rounds of the policy with the
// longest rounds, and at most 100 of the one with the shortest.
Figure timeline_figure(const std::vector<TimelinePanel>& panels, const std::string& run_name, const std::string& name,
                       const FigureOptions& options);

// The A3C training log (train.csv: update, episodes, mean_reward, mean_time_to_target_ms,
// reached_share, dropped): every column against the first (`update`), one panel each (at most 4),
// the counters `episodes` and `dropped` left out when other columns are there.
Figure training_figure(const common::CsvTable& train, const std::string& name);

// `orchestra evaluate`: each judged controller's time to target over the oracle's (the best static
// T of the sweep), per cluster (geometric mean over seeds) and over all clusters, as grouped bars on
// a log axis with the oracle at 1. A cluster where a controller missed the target says so under it.
Figure evaluation_figure(const EvaluationSummary& summary, const std::string& name);

// One controller's barrier over a run, against the oracle's static T on the same cluster and seed.
struct BarrierTrace {
  std::string cluster;
  std::vector<double> clock_s;     // simulated time at the end of each round
  std::vector<double> barrier_ms;  // T in that round
  double oracle_barrier_ms = 0;
  double oracle_time_s = 0;        // the oracle's time to target
};

// Every cluster on one pair of axes: T / oracle T (log) against time / oracle's time to target, so
// that 1 on the y axis is the best static barrier and 1 on the x axis is when the oracle got there.
Figure barrier_vs_oracle_figure(const std::vector<BarrierTrace>& traces, const std::string& controller, const std::string& name);

}  // namespace experiments
