// `orchestra draw`: clusters drawn from a training config's distribution, written as experiment
// configs (experiments/runner/drawn_cluster_config.hpp), e.g. validation clusters for `evaluate`.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>

#include "common/atomic_file.hpp"
#include "experiments/cli/cli_args.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/config/config.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/runner/drawn_cluster_config.hpp"
#include "experiments/runner/train_config.hpp"

namespace experiments {
namespace {

const char* kDrawHelp = R"(usage: orchestra draw TRAIN_CONFIG [--count N] [--seed S] [--min-comm-ratio R] [--out DIR] [--overwrite] [--quiet]

Draws clusters from a training config's distribution (its clusters: key, as the A3C agents do for
every episode) and writes each as an experiment config, DIR/drawn-<seed>.yaml: the workload of the
config's first experiment (data, model, training, budget, policies) on the drawn servers, GPU time
models, network and perturbations. Numbers are written so that they read back exactly.

Use them as validation clusters: choose among a training run's snapshots, or compare two training
recipes, with `orchestra evaluate` on clusters from the training distribution, and keep the
held-out suite (configs/heldout/) for the final judgement. Seeds are the draw's own: pick a range
the evaluation has not been tuned on. Files the workload names (data.path, runtime.surrogate, a
policy's file) are written as absolute paths, so the drawn configs read the same files anywhere.

  --count N   clusters to draw (default 8)
  --seed S    the first cluster's seed; the others take S+1, S+2, ... (default 1000)
  --min-comm-ratio R
              keep only clusters whose all-reduce takes at least R times LCM's T* (nominal: equal
              batch split, the cost model), skipping the seeds of the others: a communication-bound
              stratum, where the best barrier is often 2-9 times T*. Plain draws rarely hold such
              clusters, so a validation set without this stratum never asks a controller to raise T
  --out DIR   where to write (default results/drawn)
  --overwrite remove other results in DIR (another experiment's policy folders, a training's
              files), as `run --overwrite` does; configs drawn earlier are replaced anyway, and
              a file that draw did not write is never touched
  --quiet     no listing of what was written

example:
  orchestra draw configs/a3c_general.yaml --count 8 --seed 1000 --out results/validation
  orchestra evaluate results/a3c_general/snapshots/*.pt results/validation/*.yaml --seeds 1-2
  orchestra draw configs/a3c_general.yaml --count 12 --seed 5000 --min-comm-ratio 8 --out results/validation-comm
)";

// "1 server", "4 servers": the listing's counts.
std::string count_of(std::size_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

}  // namespace

int command_draw(const Args& args) {
  std::string config_path, out_dir = "results/drawn";
  std::int64_t count = 8, seed = 1000;
  bool quiet = false, overwrite = false;
  DrawFilter filter;
  for (ArgCursor arg(args); arg.next();) {
    const std::string& a = arg.arg();
    if (arg.is_help()) {
      std::cout << kDrawHelp;
      return 0;
    } else if (a == "--count") {
      count = arg.integer(1, 10000);
    } else if (a == "--seed") {
      seed = arg.integer(0, std::numeric_limits<std::int64_t>::max() - 10000);
    } else if (a == "--min-comm-ratio") {
      filter.min_comm_over_barrier = arg.number(0, 1e6);
    } else if (a == "--out") {
      out_dir = arg.value();
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--overwrite") {
      overwrite = true;
    } else if (arg.is_option()) {
      throw UsageError(std::string("unknown option ") + a);
    } else if (config_path.empty()) {
      config_path = a;
    } else {
      throw UsageError("draw takes one TRAIN_CONFIG, got a second: " + a);
    }
  }
  if (config_path.empty()) throw UsageError("needs TRAIN_CONFIG");
  const TrainConfig config = load_train_config(config_path);
  const auto drawn = draw_cluster_configs(config, static_cast<std::uint64_t>(seed), static_cast<int>(count), filter);
  // One draw writes into the folder at a time, and replaces only configs drawn before, never a
  // file of the same name that draw did not write (results_folder.hpp).
  FolderPlan plan;
  for (const auto& d : drawn) {
    parse_config(d.yaml, out_dir + "/" + d.name + ".yaml");  // what is written must load: a file the runner rejects is a bug here
    plan.files.push_back({d.name + ".yaml", kDrawnConfigMarker});
  }
  const ResultsFolder folder(out_dir, plan, overwrite);
  for (const auto& d : drawn) {
    const std::string path = out_dir + "/" + d.name + ".yaml";
    common::write_file_atomic(path, d.yaml);
    if (!quiet)
      std::cout << path << ": " << count_of(d.cluster.cluster.num_workers(), "worker") << ", "
                << count_of(d.cluster.cluster.num_servers(), "server") << ", "
                << count_of(d.cluster.cluster.perturbations.size(), "perturbation") << ", all-reduce " << std::setprecision(3)
                << d.cluster.reference_comm_ms / d.cluster.reference_barrier_ms << std::setprecision(6) << " x LCM's T*\n";
  }
  return 0;
}

}  // namespace experiments
