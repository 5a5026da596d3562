#include <cstdio>
#include <iostream>

#include "experiments/commands.hpp"
#include "experiments/experiment.hpp"
#include "experiments/plots.hpp"

namespace experiments {

namespace {

const char* kRunHelp = R"(usage: orchestra run CONFIG [--out DIR] [--seed N] [--threads N] [--plot] [--quiet]

Runs every policy of the experiment in CONFIG (YAML) on the same cluster, data and seed, then
prints a comparison table. Results go to DIR (default results/<name>/), one folder per policy:
rounds.csv, iterations.csv (one row per round: batch and compute time per worker, SE),
epochs.csv, evals.csv, summary.json, config.json; and comparison.md.

  --out DIR      where to write results
  --seed N       override the config's seed
  --threads N    intra-op threads for libtorch and OpenBLAS (default: runtime.threads, 1)
  --plot         at the end, draw the figures of `orchestra compare --plot` into DIR/plots/
  --quiet        no progress output

example:
  orchestra run configs/quickstart.yaml --out results/quickstart
)";

std::uint64_t parse_count(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || value[0] == '-') throw UsageError(flag + ": expected a non-negative integer, got '" + value + "'");
  return v;
}

}  // namespace

int command_run(const Args& args) {
  RunOptions options;
  bool plot = false;
  std::string config_path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kRunHelp;
      return 0;
    } else if (a == "--out") {
      options.out_dir = value();
    } else if (a == "--seed") {
      options.seed = parse_count(a, value());
    } else if (a == "--threads") {
      const auto t = parse_count(a, value());
      if (t < 1 || t > 256) throw UsageError("--threads: expected 1 to 256");
      options.threads = static_cast<int>(t);
    } else if (a == "--plot") {
      plot = true;
    } else if (a == "--quiet") {
      options.quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a + "\n" + kRunHelp);
    } else if (config_path.empty()) {
      config_path = a;
    } else {
      throw UsageError("one config at a time (got " + config_path + " and " + a + ")");
    }
  }
  if (config_path.empty()) throw UsageError(std::string("run needs a CONFIG file\n") + kRunHelp);
  ExperimentConfig config = load_config(config_path);
  if (plot) find_gnuplot("gnuplot");  // a missing gnuplot is said before a long run, not after
  const ExperimentResult result = run_experiment(std::move(config), options);
  std::cout << comparison_table(result.outcomes, result.target_accuracy)
            << "results: " << result.out_dir << "/\n";
  if (plot) plot_results(result.out_dir, options.quiet);
  return 0;
}

}  // namespace experiments
