// `orchestra run --seeds 1-5`: the experiment once per seed, each into DIR/seed-<N>/ exactly as
// `orchestra run --seed N --out DIR/seed-N` would write it, then the summary over seeds
// (analysis/seed_stats.hpp) as DIR/comparison.md and DIR/comparison.csv. Seeds run one after the
// other in this process, or in up to `jobs` processes at once; the per-seed results are the same
// files either way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/analysis/seed_stats.hpp"
#include "experiments/runner/experiment.hpp"

namespace experiments {

struct SeedRunResult {
  std::string out_dir;
  std::vector<std::uint64_t> seeds;
  std::vector<SeedRow> rows;
};

// `options.seeds` (else `config.seeds`) are the seeds; `options.jobs` the processes at once. With
// jobs > 1 every seed runs as `orchestra run CONFIG --seed N --claimed` in a child process (the
// binary at /proc/self/exe, so this needs config.file to be the file it was read from; --claimed:
// the folder is this process's, whose caller claimed DIR, results_folder.hpp), its output going to
// DIR/seed-<N>.log; a failed seed stops the others and throws, naming the seed and its log. Each
// seed's experiment is resolved (resolved_experiment.hpp) for that seed, once.
SeedRunResult run_seeds(ExperimentConfig config, const RunOptions& options);

// The seeds run_seeds runs: `options.seeds`, else the config's.
std::vector<std::uint64_t> seeds_to_run(const ExperimentConfig& config, const RunOptions& options);

// What run_seeds writes into its folder, for the claim on it (results_folder.hpp): seed-<N>/ per
// seed, each as run_folder_plan with that seed, its log, and the summary files.
FolderPlan seeds_folder_plan(const ExperimentConfig& config, const RunOptions& options);

// The summary over the seeds' folders, written as DIR/comparison.md and DIR/comparison.csv.
std::vector<SeedRow> write_seed_summary(const std::string& out_dir, const std::vector<std::uint64_t>& seeds);

}  // namespace experiments
