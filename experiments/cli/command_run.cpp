#include <cstdio>
#include <limits>
#include <iostream>
#include <optional>

#include "common/limits.hpp"
#include "env/train/dataset_registry.hpp"
#include "env/train/models.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/seed_runs.hpp"
#include "experiments/runner/simulated_cluster.hpp"
#include "experiments/analysis/plots.hpp"
#include "experiments/cli/result_story.hpp"

namespace experiments {

namespace {

const char* kRunHelp = R"(usage: orchestra run CONFIG [--out DIR] [--seed N | --seeds LIST [--jobs N]] [--threads N] [--plot] [--overwrite] [--quiet]

Runs every policy of the experiment in CONFIG (YAML) on the same cluster, data and seed, then
prints a comparison table and two lines that say what it shows (who reaches the target first,
and why: idle time, communication). Results go to DIR (default results/<name>/), one folder per
policy: rounds.csv, iterations.csv (one row per round: batch and compute time per worker, SE),
epochs.csv, evals.csv, summary.json, config.json; and comparison.md. Progress on stderr: each
policy's epochs (redrawn on a terminal, a line every 5 s and one per epoch otherwise;
ORCHESTRA_PROGRESS_EVERY_S changes the 5).

  --out DIR      where to write results
  --seed N       override the config's seed (and run that one seed)
  --seeds LIST   run every policy for each seed (1,2,3 or 1-5; default: the config's seeds:), each
                 into DIR/seed-<N>/, then DIR/comparison.md and .csv: mean, sd and 95% CI over
                 the seeds, and the speedup as a paired ratio
  --jobs N       with several seeds, run N of them at once in separate processes (default 1;
                 the results are the same files as one after another)
  --threads N    intra-op threads for libtorch and OpenBLAS (default: runtime.threads, 1)
  --plot         at the end, draw the figures of `orchestra compare --plot` into DIR/plots/
                 (`orchestra compare DIR --html` then writes one page to share)
  --overwrite    DIR holds another experiment's results (another config or seed): remove them
                 (only those folders) instead of refusing. A rerun of the same experiment
                 replaces its own results without it. One run at a time writes into DIR
  --quiet        no progress output

example:
  orchestra run configs/quickstart.yaml --out results/quickstart
)";

// The figures of `compare --plot`, saying on stderr which one it draws; where they are is said
// after the table (result_story.hpp).
PlotReport draw_figures(const std::string& results_dir, bool quiet) {
  PlotOptions options;
  options.out_dir = results_dir + "/plots";
  if (!quiet) options.on_figure = [](const std::string& name) { std::cerr << "plotting " << name << "\n"; };
  const PlotReport report = make_plots(read_results({results_dir}), options);
  if (!quiet)
    for (const auto& note : report.notes) std::cerr << "note: " << note << "\n";
  return report;
}

}  // namespace

int command_run(const Args& args) {
  RunOptions options;
  bool plot = false, overwrite = false, claimed = false;
  std::string config_path;
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    const auto value = [&]() -> const std::string& { return arg.value(); };
    if (a == "-h" || a == "--help") {
      std::cout << kRunHelp << "\npolicies (the name: of each entry under policies:):\n" << policy_help() << "\ndatasets (data.dataset:):\n"
                << env::dataset_help() << "\nmodels (model.arch:):\n" << env::model_help();
      return 0;
    } else if (a == "--out") {
      options.out_dir = value();
    } else if (a == "--seed") {
      options.overrides.seed = static_cast<std::uint64_t>(arg.integer(0, common::kMaxSeed));
    } else if (a == "--seeds") {
      options.seeds = parse_seed_list("--seeds", value());
    } else if (a == "--jobs") {
      options.jobs = static_cast<int>(arg.integer(1, 256));
    } else if (a == "--threads") {
      options.overrides.threads = static_cast<int>(arg.integer(1, 256));
    } else if (a == "--plot") {
      plot = true;
    } else if (a == "--quiet") {
      options.quiet = true;
    } else if (a == "--overwrite") {
      overwrite = true;
    } else if (a == "--claimed") {
      claimed = true;  // not in --help: a seed's run started by run --seeds --jobs, whose folder its parent holds
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a);
    } else if (config_path.empty()) {
      config_path = a;
    } else {
      throw UsageError("one config at a time (got " + config_path + " and " + a + ")");
    }
  }
  if (config_path.empty()) throw UsageError("needs a CONFIG file");
  if (options.overrides.seed && !options.seeds.empty()) throw UsageError("give --seed or --seeds, not both");
  ExperimentConfig config = load_config(config_path);
  check_simulated_config(config);  // a real cluster's config is answered with where it runs, before anything else
  if (plot) find_gnuplot("gnuplot");  // a missing gnuplot is said before a long run, not after
  // The figures are drawn before the table is printed, so that the output ends with the table,
  // the lines that say what it shows, and where the figures are.
  // The folder is this run's, and holds nothing of another experiment, before any work.
  if (!options.overrides.seed && (!options.seeds.empty() || !config.seeds.empty())) {
    if (plot) check_plots_folder(results_dir(config, options) + "/plots");  // a user's image: said before the runs
    const ResultsFolder folder(results_dir(config, options), seeds_folder_plan(config, options), overwrite);
    const SeedRunResult result = run_seeds(std::move(config), options);
    const PlotReport plots = plot ? draw_figures(result.out_dir, options.quiet) : PlotReport{};
    std::vector<std::string> seed_dirs;  // these seeds', not the folders an earlier run may have left
    for (const auto seed : result.seeds) seed_dirs.push_back(result.out_dir + "/seed-" + std::to_string(seed));
    std::cout << seed_markdown(result.rows) << "results: " << result.out_dir << "/ (one folder per seed)\n"
              << story_after_table(read_results(seed_dirs), result.out_dir, plot ? &plots : nullptr);
    return 0;
  }
  if (options.jobs > 1) throw UsageError("--jobs runs several seeds at once: give --seeds too");
  // The config resolved once (overrides, sweeps, every policy built), then run on its cluster.
  Experiment experiment = resolve_experiment(std::move(config), options.overrides);
  std::optional<ResultsFolder> folder;
  if (plot) check_plots_folder(results_dir(experiment.config, options) + "/plots");
  if (!claimed) folder.emplace(results_dir(experiment.config, options), run_folder_plan(experiment), overwrite);
  SimulatedCluster cluster;
  const ExperimentResult result = run_experiment(experiment, cluster, options);
  const PlotReport plots = plot ? draw_figures(result.out_dir, options.quiet) : PlotReport{};
  std::cout << comparison_table(result.outcomes, result.target_accuracy) << "results: " << result.out_dir << "/\n"
            << story_after_table(results_of_run(result.out_dir, result.outcomes), result.out_dir, plot ? &plots : nullptr);
  return 0;
}

}  // namespace experiments
