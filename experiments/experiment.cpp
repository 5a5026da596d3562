#include "experiments/experiment.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "env/errors.hpp"
#include "env/simulation.hpp"
#include "experiments/atomic_file.hpp"
#include "experiments/policy_factory.hpp"
#include "experiments/results_files.hpp"
#include "experiments/speedup.hpp"
#include "experiments/threads.hpp"
#include "experiments/yaml_reader.hpp"

namespace experiments {
namespace {

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

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
    } catch (const env::PlanError& e) {
      const std::string where = entry.source ? experiments::where(entry.source, config.file) : config.file;
      throw env::ConfigError(where + ": " + entry.path + " (" + entry.label + "): " + e.what());
    }
  }
}

}  // namespace

std::optional<double> speedup(const PolicyOutcome& reference, const PolicyOutcome& outcome) {
  const auto basis = [](const PolicyOutcome& o) {
    return SpeedupBasis{o.time_to_target_s, o.timing_only, o.sim_time_s, static_cast<std::int64_t>(o.epochs.size())};
  };
  return speedup_over(basis(reference), basis(outcome));
}

ExperimentResult run_experiment(ExperimentConfig config, const RunOptions& options) {
  if (config.mode == ClusterMode::Real)  // measured, not modelled: real_run.hpp
    throw env::ConfigError(config.file + ": cluster.mode: real: run it on processes with orchestra launch --nproc " +
                           std::to_string(config.cluster.num_workers()) + " " + config.file);
  if (options.seed) config.seed = *options.seed;
  if (options.threads) config.threads = *options.threads;
  config.resolved["seed"] = config.seed;
  config.resolved["runtime"]["threads"] = config.threads;
  set_compute_threads(config.threads);

  preflight(config);
  std::shared_ptr<const env::DatasetPair> data;
  if (!config.training.timing_only) data = std::make_shared<const env::DatasetPair>(env::load_dataset(config.data, config.seed));

  ExperimentResult result;
  result.target_accuracy = config.budget.target_accuracy;
  result.out_dir = options.out_dir.empty() ? "results/" + config.name : options.out_dir;
  Progress progress(Progress::style_for(stderr, options.quiet), stderr);
  for (const auto& entry : config.policies) {
    BuiltPolicy built = make_policy(entry, config);
    PolicyOutcome outcome = run_policy(config, entry, *built.policy, data, progress);
    outcome.params = built.resolved;
    nlohmann::json resolved = config.resolved;
    resolved["policy"] = built.resolved;
    const PolicyOutcome& reference = result.outcomes.empty() ? outcome : result.outcomes.front();
    const auto summary = summary_json(outcome, config.budget.target_accuracy, reference.label, speedup(reference, outcome));
    write_policy_folder(result.out_dir, outcome, summary, resolved);
    result.outcomes.push_back(std::move(outcome));
  }
  const std::string table = comparison_table(result.outcomes, config.budget.target_accuracy);
  write_file_atomic(result.out_dir + "/comparison.md", table);
  return result;
}

std::string comparison_table(const std::vector<PolicyOutcome>& outcomes, double target) {
  std::ostringstream s;
  s << "| policy | time to " << fixed(100 * target, 1) << "% (s) | speedup | final acc | final loss | epochs | sim time (s) | mean SE | utilization |\n";
  s << "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& o : outcomes) {
    const auto up = outcomes.empty() ? std::nullopt : speedup(outcomes.front(), o);
    const std::string time = o.timing_only ? "timing only" : o.time_to_target_s ? fixed(*o.time_to_target_s, 2) : "not reached";
    s << "| " << o.label << " | " << time << " | "
      << (up ? fixed(*up, 2) + "x" : std::string("-")) << " | " << fixed(o.final_accuracy, 4) << " | " << fixed(o.final_loss, 4)
      << " | " << o.epochs.size() << " | " << fixed(o.sim_time_s, 2) << " | " << fixed(o.mean_straggler_effect, 3) << " | "
      << fixed(o.mean_utilization, 3) << " |\n";
  }
  return s.str();
}

}  // namespace experiments
