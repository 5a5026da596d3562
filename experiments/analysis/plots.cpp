#include "experiments/analysis/plots.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "common/atomic_file.hpp"
#include "common/csv_table.hpp"
#include "common/errors.hpp"
#include "common/own_output.hpp"
#include "experiments/analysis/time_shares.hpp"
#include "experiments/results/round_series.hpp"

namespace experiments {
namespace {

// A figure replaces only its own files: NAME.gp made here, and the images beside such a script. A
// user's NAME.png in the folder (a figure kept from a paper, say) was replaced without a word.
void check_figure_is_ours(const std::string& base, const std::string& name) {
  common::check_replaceable_output(base + ".gp", "--plot", "a figure script of orchestra", kFigureScriptMarker);
  std::error_code ec;
  if (std::filesystem::exists(base + ".gp", ec)) return;
  for (const char* image : {".png", ".svg"})
    if (std::filesystem::exists(base + image, ec))
      throw common::UsageError("--plot " + base + image + ": an image orchestra did not draw (no " + name +
                               ".gp beside it): this command replaces only its own; move it, or choose another folder");
}

// The names figures end in (this header's list, evaluate's two): "<run>." or "<label>." may come before.
bool could_be_a_figure(const std::string& stem) {
  const auto ends_with = [&](const std::string& tail) {
    return stem.size() >= tail.size() && stem.compare(stem.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const char* name : {"accuracy_vs_time", "time_vs_epoch", "timeline", "a3c_training", ".iterations", ".barrier", "evaluation",
                           "barrier_vs_oracle"})
    if (ends_with(name)) return true;
  return false;
}

void render(const Figure& figure, const std::string& run, const PlotOptions& options, PlotReport& report) {
  if (options.on_figure) options.on_figure(figure.name);
  const std::string base = options.out_dir + "/" + figure.name;
  check_figure_is_ours(base, figure.name);
  common::write_file_atomic(base + ".gp", figure.script);
  render_gnuplot(base + ".gp", base + ".png", ImageFormat::Png, options.gnuplot);
  render_gnuplot(base + ".gp", base + ".svg", ImageFormat::Svg, options.gnuplot);
  report.files.push_back(base + ".png");
  report.files.push_back(base + ".svg");
  report.figures.push_back({run, figure.name, figure.title, base + ".png", base + ".svg"});
}

std::string shares_note(const TimeShares& s) {
  const auto pct = [](double v) { return std::to_string(static_cast<int>(std::lround(100 * v))) + "%"; };
  return "compute " + pct(s.compute) + ", idle " + pct(s.idle) + (s.comm_known ? ", communication " + pct(s.comm) : std::string());
}

}  // namespace

PlotReport draw_figures(const std::vector<Figure>& figures, const PlotOptions& options) {
  find_gnuplot(options.gnuplot.program);  // missing gnuplot: an error before any file is written
  std::filesystem::create_directories(options.out_dir);
  PlotReport report;
  for (const auto& figure : figures) render(figure, "", options, report);
  return report;
}

void check_plots_folder(const std::string& out_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(out_dir, ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(out_dir, ec)) {
    const std::filesystem::path& path = entry.path();
    const std::string extension = path.extension().string();
    if (extension != ".png" && extension != ".svg" && extension != ".gp") continue;
    const std::string stem = path.stem().string();
    if (could_be_a_figure(stem)) check_figure_is_ours((std::filesystem::path(out_dir) / stem).string(), stem);
  }
}

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
      render(epoch_time_figure(run, prefix + "time_vs_epoch"), run.name, options, report);  // no accuracy to plot
    } else if (!run.policies.empty()) {
      render(accuracy_figure(run, prefix + "accuracy_vs_time"), run.name, options, report);
    }
    // Every policy's rounds, read once: the timeline draws them all, then one figure each.
    std::vector<RoundSeries> rounds(run.policies.size());
    std::vector<TimelinePanel> timeline;
    for (std::size_t i = 0; i < run.policies.size(); ++i) {
      const PolicyResults& policy = run.policies[i];
      if (!policy.rounds_csv.empty()) {
        rounds[i] = read_rounds_csv(policy.rounds_csv);
        timeline.push_back({policy.label, &rounds[i], shares_note(time_shares(policy))});
      } else if (!policy.iterations_csv.empty()) {
        rounds[i] = read_iterations_csv(policy.iterations_csv);
      }
    }
    if (!timeline.empty()) render(timeline_figure(timeline, run.name, prefix + "timeline", options.figures), run.name, options, report);
    for (std::size_t i = 0; i < run.policies.size(); ++i) {
      const PolicyResults& policy = run.policies[i];
      const std::string label = file_name_part(policy.label);
      if (policy.rounds_csv.empty() && policy.iterations_csv.empty()) {
        report.notes.push_back(policy.label + ": no rounds.csv (output.rounds_csv: false?), so no per-round figures");
        continue;
      }
      render(iterations_figure(policy, rounds[i], prefix + label + ".iterations", options.figures), run.name, options, report);
      if (has_barrier(rounds[i])) render(barrier_figure(policy, rounds[i], prefix + label + ".barrier", options.figures), run.name, options, report);
    }
    if (!run.train_csv.empty()) render(training_figure(common::read_csv(run.train_csv), prefix + "a3c_training"), run.name, options, report);
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
