#include "experiments/analysis/plots.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "common/atomic_file.hpp"
#include "common/csv_table.hpp"
#include "experiments/results/round_series.hpp"

namespace experiments {
namespace {

void render(const Figure& figure, const PlotOptions& options, PlotReport& report) {
  if (options.on_figure) options.on_figure(figure.name);
  const std::string base = options.out_dir + "/" + figure.name;
  common::write_file_atomic(base + ".gp", figure.script);
  render_gnuplot(base + ".gp", base + ".png", ImageFormat::Png, options.gnuplot);
  render_gnuplot(base + ".gp", base + ".svg", ImageFormat::Svg, options.gnuplot);
  report.files.push_back(base + ".png");
  report.files.push_back(base + ".svg");
}

}  // namespace

std::string file_name_part(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    out += safe ? c : '_';
  }
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');  // never a hidden file or ".."
  return out;
}

PlotReport make_plots(const std::vector<RunResults>& runs, const PlotOptions& options) {
  find_gnuplot(options.gnuplot.program);  // a missing gnuplot is reported before any file is written
  std::filesystem::create_directories(options.out_dir);
  PlotReport report;
  for (const auto& run : runs) {
    const std::string prefix = runs.size() > 1 ? file_name_part(run.name) + "." : std::string();
    const bool timing_only = !run.policies.empty() &&
                             std::all_of(run.policies.begin(), run.policies.end(), [](const PolicyResults& p) { return p.timing_only; });
    if (timing_only) {
      render(epoch_time_figure(run, prefix + "time_vs_epoch"), options, report);  // no accuracy to plot
    } else if (!run.policies.empty()) {
      render(accuracy_figure(run, prefix + "accuracy_vs_time"), options, report);
    }
    for (const auto& policy : run.policies) {
      const std::string label = file_name_part(policy.label);
      RoundSeries rounds;
      if (!policy.rounds_csv.empty()) {
        rounds = read_rounds_csv(policy.rounds_csv);
      } else if (!policy.iterations_csv.empty()) {
        rounds = read_iterations_csv(policy.iterations_csv);
      } else {
        report.notes.push_back(policy.label + ": no rounds.csv (output.rounds_csv: false?), so no per-round figures");
        continue;
      }
      render(iterations_figure(policy, rounds, prefix + label + ".iterations", options.figures), options, report);
      if (has_barrier(rounds)) render(barrier_figure(policy, rounds, prefix + label + ".barrier", options.figures), options, report);
    }
    if (!run.train_csv.empty()) render(training_figure(common::read_csv(run.train_csv), prefix + "a3c_training"), options, report);
  }
  return report;
}

PlotReport plot_results(const std::string& results_dir, bool quiet) {
  PlotOptions options;
  options.out_dir = results_dir + "/plots";
  if (!quiet) options.on_figure = [](const std::string& name) { std::cerr << "plotting " << name << "\n"; };
  const PlotReport report = make_plots(read_results({results_dir}), options);
  if (!quiet) {
    for (const auto& note : report.notes) std::cerr << "note: " << note << "\n";
    std::cout << "plots: " << report.files.size() << " files in " << options.out_dir << "/\n";
  }
  return report;
}

}  // namespace experiments
