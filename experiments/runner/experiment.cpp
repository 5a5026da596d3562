#include "experiments/runner/experiment.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "common/errors.hpp"
#include "env/sim/simulation.hpp"
#include "env/train/device.hpp"
#include "common/atomic_file.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/analysis/comparison.hpp"
#include "experiments/analysis/speedup.hpp"
#include "env/train/compute_threads.hpp"
#include "common/yaml_reader.hpp"

namespace experiments {
namespace {

// Starts every policy once on a timing-only copy of the cluster, so that a policy that cannot run
// there (a batch over a worker's memory, ...) is reported before any training or any file.
void preflight(const ExperimentConfig& config) {
  for (const auto& entry : config.policies) {
    BuiltPolicy built = make_policy(entry, config);
    env::SimulationSpec spec;
    spec.cluster = config.cluster;
    spec.network = config.network;
    spec.global_batch = config.global_batch;
    spec.train_samples = config.timing_train_samples;
    spec.message_bytes = 1;
    env::Simulation simulation(spec, config.seed, nullptr);
    try {
      built.policy->start(simulation.view());
      env::PlanContext context;
      context.epoch_start = true;
      simulation.run_round(built.policy->plan(context));
    } catch (const common::PlanError& e) {
      const std::string where = entry.source ? common::where(entry.source, config.file) : config.file;
      throw common::ConfigError(where + ": " + entry.path + " (" + entry.label + "): " + e.what());
    }
  }
}

}  // namespace

void check_device(const ExperimentConfig& config) {
  try {
    env::resolve_device(config.training.device);
  } catch (const std::invalid_argument& e) {
    common::YamlReader::fail_at(config.device_source, config.file, "runtime.device", e.what());
  }
}

std::string comparison_table(const std::vector<PolicyOutcome>& outcomes, double target_accuracy) {
  return comparison_markdown(comparison_rows("", outcomes, target_accuracy));
}

nlohmann::json summary_of(const std::vector<PolicyOutcome>& done, const PolicyOutcome& outcome, double target_accuracy) {
  std::vector<std::string> kinds;
  for (const auto& o : done) kinds.push_back(o.kind);
  const PolicyOutcome& reference = done.empty() ? outcome : done[speedup_reference_index(kinds)];
  return summary_json(outcome, target_accuracy, reference.label, speedup(reference, outcome));
}

void write_final_summaries(const std::string& out_dir, const std::vector<PolicyOutcome>& outcomes, double target_accuracy) {
  for (const auto& o : outcomes) write_summary(out_dir, o, summary_of(outcomes, o, target_accuracy));
}

std::string results_dir(const ExperimentConfig& config, const RunOptions& options) {
  return options.out_dir.empty() ? "results/" + config.name : options.out_dir;
}

FolderPlan run_folder_plan(ExperimentConfig config, const RunOptions& options) {
  if (options.seed) config.resolved["seed"] = *options.seed;
  expand_sweeps(config);
  FolderPlan plan;
  plan.identity = experiment_identity(config.resolved);
  for (const auto& p : config.policies) plan.labels.insert(p.label);
  return plan;
}

ExperimentResult run_experiment(ExperimentConfig config, const RunOptions& options) {
  if (config.mode == ClusterMode::Real)  // measured, not modelled: real_run.hpp
    throw common::ConfigError(config.file + ": cluster.mode: real: run it on processes with orchestra launch --nproc " +
                           std::to_string(config.cluster.num_workers()) + " " + config.file);
  if (options.seed) config.seed = *options.seed;
  if (options.threads) config.threads = *options.threads;
  config.resolved["seed"] = config.seed;
  config.resolved["runtime"]["threads"] = config.threads;
  env::set_compute_threads(config.threads);

  expand_sweeps(config);
  check_device(config);
  preflight(config);
  std::shared_ptr<const env::DatasetPair> data;
  if (!config.training.timing_only) data = std::make_shared<const env::DatasetPair>(env::load_dataset(config.data, config.seed));

  ExperimentResult result;
  result.target_accuracy = config.budget.target_accuracy;
  result.out_dir = results_dir(config, options);
  Progress progress(Progress::style_for(stderr, options.quiet), stderr);
  progress.set_prefix(options.progress_prefix);
  for (const auto& entry : config.policies) {
    BuiltPolicy built = make_policy(entry, config);
    PolicyOutcome outcome = simulate_policy(config, entry, *built.policy, data, progress);
    outcome.params = built.resolved;
    nlohmann::json resolved = config.resolved;
    resolved["policy"] = built.resolved;
    std::vector<PolicyOutcome> so_far = result.outcomes;
    so_far.push_back(outcome);
    write_policy_folder(result.out_dir, outcome, summary_of(so_far, outcome, config.budget.target_accuracy), resolved);
    result.outcomes.push_back(std::move(outcome));
  }
  // A dsgd listed after other policies becomes their reference only once it has run.
  write_final_summaries(result.out_dir, result.outcomes, config.budget.target_accuracy);
  common::write_file_atomic(result.out_dir + "/comparison.md", comparison_table(result.outcomes, config.budget.target_accuracy));
  return result;
}

}  // namespace experiments
