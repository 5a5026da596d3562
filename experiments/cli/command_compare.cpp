// `orchestra compare`: the comparison table of one or several runs, and optionally their figures.
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "common/atomic_file.hpp"
#include "common/folder_lock.hpp"
#include "common/own_output.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/analysis/comparison.hpp"
#include "experiments/analysis/fidelity.hpp"
#include "experiments/analysis/seed_stats.hpp"
#include "experiments/analysis/plots.hpp"
#include "experiments/cli/result_story.hpp"
#include "experiments/report/html_report.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/runner/evaluation.hpp"
#include "experiments/runner/results_writer.hpp"

namespace experiments {

namespace {

// Said even with --quiet: a table without them must not pass for the whole folder.
void say_skipped(const std::vector<SkippedFolder>& skipped) {
  for (const auto& s : skipped) std::cerr << "orchestra compare: skipped " << s.dir << ": " << s.reason << "\n";
}

const char* kCompareHelp = R"(usage: orchestra compare RESULTS_DIR... [--out DIR] [--plot] [--html] [--quiet]
       orchestra compare REAL_DIR... --sim SIM_DIR [--out DIR] [--quiet]
       orchestra compare REAL_DIR --repeat REAL2_DIR [--out DIR] [--quiet]

Compares the policies of one or several runs of `orchestra run`. RESULTS_DIR is an experiment's
folder (results/quickstart), one policy's folder, or a folder of experiments (results/). Prints,
per policy: time to target accuracy, speedup over `dsgd` (else over the run's first policy), final
accuracy and loss, mean straggler effect, utilization and idle time per worker. Writes the table
as DIR/compare.md and DIR/compare.csv, then two lines: who reaches the target first and why (idle
time, communication). The folder of a multi-seed run (`orchestra run --seeds`, sub-folders
seed-<N>) gives the summary over seeds instead: mean ± 95% CI and the paired speedup. The folder
of `orchestra evaluate` gives its judgement again (evaluation.md and .csv; figures with --plot).

  --out DIR      where to write (default: RESULTS_DIR when one is given, else ./comparison)
  --plot         also draw the figures with gnuplot into DIR/plots/, as PNG and SVG with the
                 gnuplot script of each: accuracy_vs_time (time_vs_epoch for timing-only runs),
                 timeline (compute, idle and communication per worker), <policy>.iterations,
                 <policy>.barrier (Orchestra's T and tau_n), a3c_training (if train.csv)
  --html         also write DIR/report.html: one self-contained page to share, readable offline
                 (the tables, those two lines, every figure of --plot as inline SVG, the seeds,
                 each policy's parameters, the resolved config, the toolkit's version); draws
                 the figures as --plot does
  --gnuplot PATH the gnuplot to run (default: gnuplot on PATH)
  --sim SIM_DIR  the simulator's fidelity: REAL_DIR is a real run (orchestra launch), SIM_DIR its
                 calibrated simulation (orchestra calibrate, then run). Prints per policy the real
                 and simulated epoch time (each epoch's length on its run's clock: wall time
                 training, or the cost model's; evaluation on neither) and time to target with
                 the relative error, the mean absolute error over policies and epochs, and
                 whether the policies rank the same by epoch time and by time to target. Writes
                 DIR/fidelity.md (DIR: --out, default the first REAL_DIR). Several REAL_DIRs,
                 real runs of one experiment: the simulation against their mean, and a ranking
                 judged on the pairs of policies that every real run orders the same way (the
                 others, within this machine's run-to-run noise, are named)
  --repeat REAL2_DIR  the same table between two real runs of one experiment: how far one run
                 of this machine is from the next, the floor below which no simulation can match
                 a single real run. Writes DIR/run_to_run.md
  --quiet        print only errors

example:
  orchestra run configs/quickstart.yaml --out results/quickstart
  orchestra compare results/quickstart --plot
  orchestra compare results/baselines --html   # a multi-seed folder: the summary over seeds too
)";

}  // namespace

int command_compare(const Args& args) {
  std::vector<std::string> dirs;
  std::string out_dir, sim_dir, repeat_dir;
  bool plot = false;
  bool html = false;
  bool quiet = false;
  PlotOptions plot_options;
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    const auto value = [&]() -> const std::string& { return arg.value(); };
    if (a == "-h" || a == "--help") {
      std::cout << kCompareHelp;
      return 0;
    } else if (a == "--out") {
      out_dir = value();
    } else if (a == "--sim") {
      sim_dir = value();
    } else if (a == "--repeat") {
      repeat_dir = value();
    } else if (a == "--plot") {
      plot = true;
    } else if (a == "--html") {
      html = true;
    } else if (a == "--gnuplot") {
      plot_options.gnuplot.program = value();
    } else if (a == "--quiet") {
      quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a);
    } else {
      dirs.push_back(a);
    }
  }
  if (dirs.empty()) throw UsageError("needs at least one RESULTS_DIR");
  if (out_dir.empty()) out_dir = dirs.size() == 1 || !sim_dir.empty() ? dirs.front() : "comparison";
  // The folder it writes is held as a run holds its own: a run still writing it (the default: the
  // folder compared) is refused with its pid, where its half-written results were read as final.
  std::optional<common::FolderLock> lock;
  const auto hold_out_dir = [&] { lock.emplace(out_dir); };
  if (!sim_dir.empty() || !repeat_dir.empty()) {
    if (!sim_dir.empty() && !repeat_dir.empty()) throw UsageError("--sim and --repeat: give one of them");
    const bool repeat = !repeat_dir.empty();
    const std::string option = repeat ? "--repeat" : "--sim";
    if (repeat && dirs.size() != 1) throw UsageError("--repeat compares one real run with another: give one REAL_DIR");
    if (plot || html) throw UsageError(option + " writes a table only; run compare --plot (or --html) on each folder for figures");
    std::vector<RunResults> real;
    for (const auto& dir : dirs) {
      std::vector<SkippedFolder> skipped;
      std::vector<RunResults> one = read_results({dir}, &skipped);
      say_skipped(skipped);
      if (one.size() != 1) throw UsageError(option + " needs one experiment's folder on each side: " + dir + " holds " + std::to_string(one.size()));
      real.push_back(std::move(one.front()));
    }
    std::vector<SkippedFolder> skipped;
    const std::vector<RunResults> other = read_results({repeat ? repeat_dir : sim_dir}, &skipped);
    say_skipped(skipped);
    if (other.size() != 1) throw UsageError(option + " needs one experiment's folder on each side");
    const std::string table = fidelity_markdown(repeat ? compare_fidelity(real.front(), other.front(), FidelityReference::RepeatRun)
                                                       : compare_fidelity(real, other.front()));
    const std::string file = out_dir + (repeat ? "/run_to_run.md" : "/fidelity.md");
    hold_out_dir();
    common::write_file_atomic(file, table);
    if (!quiet) std::cout << table << "written: " << file << "\n";
    return 0;
  }

  if (dirs.size() == 1 && std::filesystem::exists(std::filesystem::path(dirs.front()) / "evaluation.md")) {
    // An `orchestra evaluate` folder: its judgement again, from the runs it kept, and its figures.
    if (html) throw UsageError("--html: an evaluation folder has its table and --plot figures; compare a cluster's seed-<N> folder for a report");
    const std::vector<ControllerRun> controller_runs = read_evaluation_runs(dirs.front());
    const EvaluationSummary summary = summarize_evaluation(controller_runs);
    hold_out_dir();
    const std::vector<std::string> written = write_evaluation_tables(out_dir, summary, controller_runs);
    if (!quiet) {
      std::cout << evaluation_markdown(summary) << "written:";
      for (std::size_t i = 0; i < written.size(); ++i) std::cout << (i ? ", " : " ") << written[i];
      std::cout << "\n";
    }
    if (plot && !summary.overall.empty()) {
      find_gnuplot(plot_options.gnuplot.program);
      plot_options.out_dir = out_dir + "/plots";
      const auto files = plot_evaluation(dirs.front(), summary, summary.overall.front().controller, plot_options);
      if (!quiet && files.empty()) std::cout << "plots: none, no controller reached the target on any cluster\n";
      if (!quiet && !files.empty()) std::cout << "plots: " << files.size() << " files in " << plot_options.out_dir << "/\n";
    }
    return 0;
  }
  std::vector<SkippedFolder> skipped;
  const std::vector<RunResults> runs = read_results(dirs, &skipped);
  say_skipped(skipped);
  // A run's name labels its rows and names its figures: two runs of one name would share them,
  // the second's figures written over the first's.
  std::map<std::string, std::string> folder_of;
  for (const auto& run : runs)
    if (const auto [at, fresh] = folder_of.emplace(run.name, run.dir); !fresh)
      throw UsageError(at->second == run.dir ? run.dir + " is given twice"
                                             : "two runs named '" + run.name + "' (" + at->second + " and " + run.dir +
                                                   "): their rows and figures would share one name; copy or link one under another name");
  if (is_seed_folder(runs)) check_one_experiment(runs);
  plot = plot || html;  // the report holds every figure
  if (plot) find_gnuplot(plot_options.gnuplot.program);  // fail before writing anything
  const std::vector<ComparisonRow> rows = comparison_rows(runs);
  hold_out_dir();
  // compare.md, compare.csv and report.html replace only their own kind: a user's notes of the
  // same name in --out are kept (draw, run and calibrate keep theirs the same way).
  common::check_replaceable_output(out_dir + "/compare.md", "--out", "a table of orchestra compare", kComparisonMarkdownMarker);
  common::check_replaceable_output(out_dir + "/compare.csv", "--out", "a table of orchestra compare", kSeedComparisonCsvMarker);
  if (html) common::check_replaceable_output(out_dir + "/report.html", "--out", "a report of orchestra compare --html", kReportGenerator);
  if (is_seed_folder(runs)) {
    // A multi-seed run (orchestra run --seeds): the summary over seeds, as the run printed it.
    const std::vector<SeedRow> seed_table = seed_rows(runs);
    const std::string table = seed_markdown(seed_table);
    common::write_file_atomic(out_dir + "/compare.md", table);
    common::write_file_atomic(out_dir + "/compare.csv", seed_csv(seed_table));
    if (!quiet) std::cout << table << "written: " << out_dir << "/compare.md, " << out_dir << "/compare.csv\n";
  } else if (rows.empty()) {
    // Only A3C training folders (train.csv): there is no policy to tabulate, only the curve to draw.
    if (!quiet) std::cout << "no policy results to compare (only A3C training logs)" << (plot ? "" : "; add --plot for the training curve") << "\n";
  } else {
    const std::string table = comparison_markdown(rows);
    common::write_file_atomic(out_dir + "/compare.md", table);
    common::write_file_atomic(out_dir + "/compare.csv", comparison_csv(rows));
    if (!quiet) std::cout << table << "written: " << out_dir << "/compare.md, " << out_dir << "/compare.csv\n";
  }
  PlotReport plots;
  if (plot) {
    plot_options.out_dir = out_dir + "/plots";
    if (!quiet) plot_options.on_figure = [](const std::string& name) { std::cerr << "plotting " << name << "\n"; };
    plots = make_plots(runs, plot_options);
    if (!quiet) {
      for (const auto& note : plots.notes) std::cerr << "note: " << note << "\n";
      std::cout << "plots: " << plots.files.size() << " files in " << plot_options.out_dir << "/\n";
    }
  }
  std::string report;
  if (html) {
    report = out_dir + "/report.html";
    common::write_file_atomic(report, html_report(ReportInput{dirs.size() == 1 ? dirs.front() : out_dir, runs, plots.figures}));
  }
  if (!quiet && !rows.empty()) std::cout << story_after_table(runs, out_dir, plot ? &plots : nullptr, report);
  else if (!quiet && !report.empty()) std::cout << "Report: " << report << "\n";
  return 0;
}

}  // namespace experiments
