#include "experiments/runner/experiment.hpp"

#include "common/yaml_reader.hpp"
#include "env/train/compute_threads.hpp"
#include "env/train/device.hpp"
#include "experiments/runner/results_writer.hpp"
#include "experiments/runner/simulated_cluster.hpp"

namespace experiments {

void check_device(const ExperimentConfig& config) {
  try {
    env::resolve_device(config.training.device);
  } catch (const std::invalid_argument& e) {
    common::YamlReader::fail_at(config.device_source, config.file, "runtime.device", e.what());
  }
}

std::string results_dir(const ExperimentConfig& config, const RunOptions& options) {
  return options.out_dir.empty() ? "results/" + config.name : options.out_dir;
}

FolderPlan run_folder_plan(const Experiment& experiment) {
  FolderPlan plan;
  plan.identity = experiment_identity(experiment.config.resolved);
  for (const auto& p : experiment.policies) {
    plan.labels.insert(p.entry.label);
    plan.policy_params[p.entry.label] = p.params;
  }
  plan.files.push_back({"comparison.md", kComparisonMarkdownMarker});
  return plan;
}

ExperimentResult run_experiment(Experiment& experiment, ExperimentCluster& cluster, const RunOptions& options) {
  const ExperimentConfig& config = experiment.config;
  env::set_compute_threads(config.threads);
  cluster.prepare(experiment);
  ResultsWriter writer(results_dir(config, options), config.resolved, config.budget.target_accuracy);
  Progress progress(cluster.writes_results() ? Progress::style_for(stderr, options.quiet) : Progress::Style::Quiet, stderr);
  progress.set_prefix(options.progress_prefix);
  for (auto& policy : experiment.policies) cluster.run(experiment, policy, progress, writer);
  if (cluster.writes_results()) writer.finish();
  return {writer.out_dir(), writer.outcomes(), config.budget.target_accuracy};
}

ExperimentResult run_experiment(ExperimentConfig config, const RunOptions& options) {
  Experiment experiment = resolve_experiment(std::move(config), options.overrides);
  SimulatedCluster cluster;
  return run_experiment(experiment, cluster, options);
}

}  // namespace experiments
