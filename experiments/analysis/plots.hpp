// The figures of `orchestra compare --plot` and `orchestra run --plot`, as PNG and SVG with their
// gnuplot scripts beside them (plot_scripts.hpp says what each shows):
//   accuracy_vs_time       every policy of a run (Orchestra Fig. 3)
//   timeline               where each policy's time goes, per worker: compute, idle, communication
//   <label>.iterations     per policy with a rounds.csv (or iterations.csv): LBB Fig. 7
//   <label>.barrier        per policy with a barrier T in rounds.csv: Orchestra's T and tau_n
//   a3c_training           when the run holds an A3C train.csv
// With several runs each name starts with "<run>.".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "experiments/analysis/gnuplot.hpp"
#include "common/errors.hpp"
#include "experiments/analysis/plot_scripts.hpp"
#include "experiments/results/results_reader.hpp"

namespace experiments {

struct PlotOptions {
  std::string out_dir;  // created if missing
  GnuplotOptions gnuplot;
  FigureOptions figures;
  std::function<void(const std::string& figure)> on_figure;  // called before each figure renders (progress)
};

struct DrawnFigure {
  std::string run;    // the run it belongs to (its folder's name)
  std::string name;   // accuracy_vs_time, timeline, <label>.iterations, ... (with "<run>." when several runs)
  std::string title;  // as drawn
  std::string png, svg;  // the images' paths
};

struct PlotReport {
  std::vector<std::string> files;  // images written, PNG then SVG of each figure
  std::vector<DrawnFigure> figures;  // the same, one entry per figure, in the order drawn
  std::vector<std::string> notes;  // figures left out and why (a policy with no rounds.csv, ...)
};

// Throws common::PlotError when gnuplot is missing (before any file is written) or fails, common::DataError
// for a malformed results file.
PlotReport make_plots(const std::vector<RunResults>& runs, const PlotOptions& options);

// `--plot` of `orchestra run` and `orchestra compare`: reads the results in `results_dir`, draws
// every figure into `results_dir`/plots and, unless quiet, says which figure it is drawing.
PlotReport plot_results(const std::string& results_dir, bool quiet);

// Draws the given figures into options.out_dir (created if missing): `orchestra evaluate --plot`.
PlotReport draw_figures(const std::vector<Figure>& figures, const PlotOptions& options);

// Before a long run with --plot: refuses (common::UsageError, as drawing would) an image in
// `out_dir` that one of these figures would replace and that orchestra did not draw, so the
// refusal comes before the hours of runs, not after them. Nothing there, or only its own: fine.
void check_plots_folder(const std::string& out_dir);

// A label or run name as a file name: letters, digits, '.', '-', '_'; anything else becomes '_'.
std::string file_name_part(const std::string& text);

}  // namespace experiments
