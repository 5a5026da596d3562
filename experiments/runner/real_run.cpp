#include "experiments/runner/real_run.hpp"

#include "common/errors.hpp"
#include "common/yaml_reader.hpp"
#include "env/real/real_worker.hpp"
#include "common/atomic_file.hpp"
#include "experiments/registry/policy_registry.hpp"
#include "experiments/runner/real_checkpoint.hpp"
#include "env/real/real_cluster.hpp"
#include "experiments/results/results_files.hpp"
#include "env/train/compute_threads.hpp"
#include "env/train/device.hpp"

namespace experiments {
namespace {

env::RealWorkerSpec worker_spec(const ExperimentConfig& config, int rank, torch::Device device) {
  env::RealWorkerSpec spec;
  spec.training = config.training;
  spec.device = device;
  spec.seed = config.seed;
  spec.cluster = config.cluster;
  for (const auto& p : config.cluster.perturbations)
    if (p.worker == rank) spec.perturbations.push_back(p);
  return spec;
}

void write_results(const std::string& out_dir, const PolicyOutcome& outcome, const std::vector<PolicyOutcome>& earlier,
                   const ExperimentConfig& config, const nlohmann::json& resolved) {
  std::vector<PolicyOutcome> so_far = earlier;
  so_far.push_back(outcome);
  write_policy_folder(out_dir, outcome, summary_of(so_far, outcome, config.budget.target_accuracy), resolved);
}

// Rank 0 through the one run loop. A failure of rank 0's own (a plan error, a results file it
// cannot write) is sent to the other ranks as Abort before it is rethrown, so they stop with that
// message instead of timing out.
PolicyOutcome lead_policy(const ExperimentConfig& config, const PolicyConfig& entry, env::BarrierPolicy& policy, env::RealWorker& worker,
                          env::Communicator& comm, const env::Dataset& test, Progress& progress,
                          const std::optional<RunCheckpoint>& checkpoint, const EpochCallback& after_epoch) {
  std::optional<env::ResumePoint> resume;
  if (checkpoint) resume = env::ResumePoint{checkpoint->epochs_done, checkpoint->rounds, checkpoint->clock_ms};
  env::RealCluster cluster({config.cluster, config.network, config.global_batch}, worker, comm, test, resume);
  try {
    PolicyOutcome outcome = run_policy(config, entry, policy, cluster, progress, checkpoint, after_epoch);
    cluster.end();
    return outcome;
  } catch (const common::CommError&) {
    throw;  // the group is broken: nothing can be sent
  } catch (const std::exception& e) {
    try {
      cluster.abort(e.what());
    } catch (const common::CommError&) {
      // The others stop on their own timeout; the original error is what the user needs.
    }
    throw;
  }
}

// Rank 0 decides (it alone reads the checkpoints) and tells every rank whether a policy is done.
bool agree_skip(env::Communicator& comm, bool skip, const std::string& label) {
  torch::Tensor flag = torch::full({1}, skip ? 1 : 0, torch::kInt64);
  comm.broadcast(flag, 0, "resume decision for " + label);
  return flag.item<std::int64_t>() != 0;
}

}  // namespace

void check_real_config(const ExperimentConfig& config, int world_size) {
  if (config.mode != ClusterMode::Real)
    throw common::ConfigError(config.file + ": cluster.mode: launch runs real clusters; this config is simulated (set cluster.mode: real, or use orchestra run)");
  if (config.cluster.num_workers() != world_size)
    throw common::ConfigError(config.file + ": cluster: lists " + std::to_string(config.cluster.num_workers()) + " workers but the launch starts " +
                           std::to_string(world_size) + " processes (one per worker, in cluster order)");
  if (config.training.timing_only) throw common::ConfigError(config.file + ": training.timing_only: a real run trains for real; remove it");
  check_device(config);
}

ExperimentResult run_real_experiment(ExperimentConfig config, env::Communicator& comm, const RealRunOptions& options) {
  if (options.seed) config.seed = *options.seed;
  if (options.threads) config.threads = *options.threads;
  config.resolved["seed"] = config.seed;
  config.resolved["runtime"]["threads"] = config.threads;
  config.resolved["real"] = {{"world_size", comm.world_size()}, {"backend", comm.describe().substr(0, comm.describe().find(' '))},
                             {"timeout_s", comm.timeout().count() / 1000.0}};
  check_real_config(config, comm.world_size());
  expand_sweeps(config);
  env::set_compute_threads(config.threads);
  const bool leader = comm.rank() == 0;
  const torch::Device device = options.device ? *options.device : env::rank_device(config.training.device, 0);
  // Every rank holds the data set in memory, on its device, but only ever reads its own samples (RealWorker).
  const auto data = env::place_on(std::make_shared<const env::DatasetPair>(env::load_dataset(config.data, config.seed)), device);

  ExperimentResult result;
  result.target_accuracy = config.budget.target_accuracy;
  result.out_dir = options.out_dir.empty() ? "results/" + config.name : options.out_dir;
  Progress progress(leader ? Progress::style_for(stderr, options.quiet) : Progress::Style::Quiet, stderr);
  for (const auto& entry : config.policies) {
    BuiltPolicy built = make_policy(entry, config);  // on every rank: the same parameter errors everywhere
    nlohmann::json resolved = config.resolved;
    resolved["policy"] = built.resolved;
    std::optional<RunCheckpoint> checkpoint;
    if (leader && options.resume) checkpoint = load_checkpoint(result.out_dir, entry.label);
    if (agree_skip(comm, checkpoint && checkpoint->finished, entry.label)) {
      if (leader) result.outcomes.push_back(checkpoint->outcome);
      continue;
    }
    env::RealWorker worker(worker_spec(config, comm.rank(), device), data, comm);
    if (!leader) {
      env::follow_policy(worker, comm);
      continue;
    }
    if (checkpoint) load_checkpoint_model(result.out_dir, entry.label, worker.replicas().model(0));
    auto after_epoch = [&](const RunCheckpoint& c) {
      PolicyOutcome partial = c.outcome;
      partial.params = built.resolved;
      write_results(result.out_dir, partial, result.outcomes, config, resolved);
      save_checkpoint(result.out_dir, c, &worker.replicas().model(0), resolved);
    };
    PolicyOutcome outcome = lead_policy(config, entry, *built.policy, worker, comm, data->test, progress, checkpoint, after_epoch);
    outcome.params = built.resolved;
    write_results(result.out_dir, outcome, result.outcomes, config, resolved);
    RunCheckpoint done;
    done.finished = true;
    done.epochs_done = static_cast<int>(outcome.epochs.size());
    done.rounds = outcome.rounds;
    done.clock_ms = outcome.sim_time_s * 1000.0;
    done.outcome = outcome;
    save_checkpoint(result.out_dir, done, nullptr, resolved);
    result.outcomes.push_back(std::move(outcome));
  }
  if (leader) {
    write_final_summaries(result.out_dir, result.outcomes, config.budget.target_accuracy);
    common::write_file_atomic(result.out_dir + "/comparison.md", comparison_table(result.outcomes, config.budget.target_accuracy));
  }
  return result;
}

}  // namespace experiments
