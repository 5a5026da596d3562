#include "experiments/runner/simulated_cluster.hpp"

#include "common/errors.hpp"
#include "common/yaml_reader.hpp"
#include "env/sim/simulation.hpp"
#include "env/surrogate/surrogate_env.hpp"
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
      const env::RoundPlan plan = p.policy->plan(context);
      if (config.training_backend == TrainingBackend::Surrogate && plan.aggregation == env::Aggregation::ModelAverage &&
          (plan.weighting == env::AverageWeighting::FedNova || plan.outer))
        throw common::PlanError("the surrogate of training (runtime.training: surrogate) models plain model averaging: FedNova's "
                                "weighting and an outer optimizer are not modelled; run this policy with training: libtorch");
      simulation.run_round(plan);
    } catch (const common::PlanError& e) {
      const std::string where = p.entry.source ? common::where(p.entry.source, config.file) : config.file;
      throw common::ConfigError(where + ": " + p.entry.path + " (" + p.entry.label + "): " + e.what());
    }
  }
}

}  // namespace

void check_simulated_config(const ExperimentConfig& config) {
  if (config.mode == ClusterMode::Real)  // measured, not modelled: real_run.hpp
    throw common::ConfigError(config.mode_where + ": cluster.mode: real: run it on processes with orchestra launch --nproc " +
                              std::to_string(config.cluster.num_workers()) + " " + config.file);
}

void SimulatedCluster::prepare(Experiment& experiment) {
  const ExperimentConfig& config = experiment.config;
  check_simulated_config(config);
  check_device(config);
  preflight(experiment);
  // The surrogate needs no data: its task records the data set's size.
  if (!config.training.timing_only && config.training_backend == TrainingBackend::Libtorch) data_ = std::make_shared<const env::DatasetPair>(env::load_dataset(config.data, config.seed));
}

PolicyOutcome run_simulated_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy,
                                   const std::shared_ptr<const env::DatasetPair>& data, Progress& progress) {
  env::EnvSpec spec;
  spec.simulation.cluster = config.cluster;
  spec.simulation.network = config.network;
  spec.simulation.global_batch = config.global_batch;
  spec.simulation.train_samples = config.timing_train_samples;
  spec.simulation.message_bytes = config.network.message_bytes;
  spec.training = config.training;
  if (config.training_backend == TrainingBackend::Surrogate) {  // runtime.training: surrogate
    env::SurrogateEnvSpec surrogate;
    surrogate.simulation = spec.simulation;
    surrogate.simulation.train_samples = 0;  // the surrogate task's
    surrogate.simulation.shards = config.training.shards;
    surrogate.cosine_lr = config.training.lr_schedule == env::LrSchedule::Cosine;
    surrogate.planned_epochs = config.training.planned_epochs;
    env::SurrogateEnv cluster(surrogate, config.surrogate, config.seed);
    return run_policy(config, entry, policy, cluster, progress);
  }
  env::LocalSgdEnv cluster(spec, config.training.timing_only ? nullptr : data, config.seed, env::input_shape_of(config.data));
  return run_policy(config, entry, policy, cluster, progress);
}

void SimulatedCluster::run(const Experiment& experiment, ExperimentPolicy& policy, Progress& progress, ResultsWriter& writer) {
  PolicyOutcome outcome = run_simulated_policy(experiment.config, policy.entry, *policy.policy, data_, progress);
  outcome.params = policy.params;
  writer.write_finished(std::move(outcome));
}

}  // namespace experiments
