#include "experiments/runner/simulated_cluster.hpp"

#include "common/errors.hpp"
#include "common/yaml_reader.hpp"
#include "env/sim/simulation.hpp"
#include "env/train/local_sgd_env.hpp"
#include "experiments/runner/run_loop.hpp"

namespace experiments {
namespace {

// Each policy started once on a timing-only copy of the cluster and asked for its first plan. The
// run starts it afresh (BarrierPolicy::start forgets everything an earlier start learned).
void preflight(const Experiment& experiment) {
  const ExperimentConfig& config = experiment.config;
  for (const auto& p : experiment.policies) {
    env::SimulationSpec spec;
    spec.cluster = config.cluster;
    spec.network = config.network;
    spec.global_batch = config.global_batch;
    spec.train_samples = config.timing_train_samples;
    spec.message_bytes = 1;
    env::Simulation simulation(spec, config.seed, nullptr);
    try {
      p.policy->start(simulation.view());
      env::PlanContext context;
      context.epoch_start = true;
      simulation.run_round(p.policy->plan(context));
    } catch (const common::PlanError& e) {
      const std::string where = p.entry.source ? common::where(p.entry.source, config.file) : config.file;
      throw common::ConfigError(where + ": " + p.entry.path + " (" + p.entry.label + "): " + e.what());
    }
  }
}

}  // namespace

void check_simulated_config(const ExperimentConfig& config) {
  if (config.mode == ClusterMode::Real)  // measured, not modelled: real_run.hpp
    throw common::ConfigError(config.file + ": cluster.mode: real: run it on processes with orchestra launch --nproc " +
                              std::to_string(config.cluster.num_workers()) + " " + config.file);
}

void SimulatedCluster::prepare(Experiment& experiment) {
  const ExperimentConfig& config = experiment.config;
  check_simulated_config(config);
  check_device(config);
  preflight(experiment);
  if (!config.training.timing_only) data_ = std::make_shared<const env::DatasetPair>(env::load_dataset(config.data, config.seed));
}

void SimulatedCluster::run(const Experiment& experiment, ExperimentPolicy& policy, Progress& progress, ResultsWriter& writer) {
  const ExperimentConfig& config = experiment.config;
  env::EnvSpec spec;
  spec.simulation.cluster = config.cluster;
  spec.simulation.network = config.network;
  spec.simulation.global_batch = config.global_batch;
  spec.simulation.train_samples = config.timing_train_samples;
  spec.simulation.message_bytes = config.network.message_bytes;
  spec.training = config.training;
  env::LocalSgdEnv cluster(spec, config.training.timing_only ? nullptr : data_, config.seed, env::input_shape_of(config.data));
  PolicyOutcome outcome = run_policy(config, policy.entry, *policy.policy, cluster, progress);
  outcome.params = policy.params;
  writer.write_finished(std::move(outcome));
}

}  // namespace experiments
