#include "experiments/real_run.hpp"

#include "env/errors.hpp"
#include "env/real_worker.hpp"
#include "experiments/atomic_file.hpp"
#include "experiments/policy_factory.hpp"
#include "experiments/real_checkpoint.hpp"
#include "experiments/real_leader.hpp"
#include "experiments/results_files.hpp"
#include "experiments/threads.hpp"

namespace experiments {
namespace {

env::RealWorkerSpec worker_spec(const ExperimentConfig& config, int rank) {
  env::RealWorkerSpec spec;
  spec.training = config.training;
  spec.seed = config.seed;
  for (const auto& w : config.cluster.workers) {
    spec.server_of.push_back(w.server);
    spec.max_batch.push_back(w.max_batch);
  }
  for (const auto& p : config.cluster.perturbations)
    if (p.worker == rank) spec.perturbations.push_back(p);
  return spec;
}

void write_results(const std::string& out_dir, const PolicyOutcome& outcome, const std::vector<PolicyOutcome>& earlier,
                   const ExperimentConfig& config, const nlohmann::json& resolved) {
  const PolicyOutcome& reference = earlier.empty() ? outcome : earlier.front();
  const auto summary = summary_json(outcome, config.budget.target_accuracy, reference.label, speedup(reference, outcome));
  write_policy_folder(out_dir, outcome, summary, resolved);
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
    throw env::ConfigError(config.file + ": cluster.mode: launch runs real clusters; this config is simulated (set cluster.mode: real, or use orchestra run)");
  if (config.cluster.num_workers() != world_size)
    throw env::ConfigError(config.file + ": cluster: lists " + std::to_string(config.cluster.num_workers()) + " workers but the launch starts " +
                           std::to_string(world_size) + " processes (one per worker, in cluster order)");
  if (config.training.timing_only) throw env::ConfigError(config.file + ": training.timing_only: a real run trains for real; remove it");
}

ExperimentResult run_real_experiment(ExperimentConfig config, env::Communicator& comm, const RealRunOptions& options) {
  if (options.seed) config.seed = *options.seed;
  if (options.threads) config.threads = *options.threads;
  config.resolved["seed"] = config.seed;
  config.resolved["runtime"]["threads"] = config.threads;
  config.resolved["real"] = {{"world_size", comm.world_size()}, {"backend", comm.describe().substr(0, comm.describe().find(' '))},
                             {"timeout_s", comm.timeout().count() / 1000.0}};
  check_real_config(config, comm.world_size());
  set_compute_threads(config.threads);
  const bool leader = comm.rank() == 0;
  // Every rank holds the data set in memory but only ever reads its own samples (RealWorker).
  auto data = std::make_shared<const env::DatasetPair>(env::load_dataset(config.data, config.seed));

  ExperimentResult result;
  result.target_accuracy = config.budget.target_accuracy;
  result.out_dir = options.out_dir.empty() ? "results/" + config.name : options.out_dir;
  Progress progress(leader ? Progress::style_for(stderr, options.quiet) : Progress::Style::Quiet, stderr);
  for (const auto& entry : config.policies) {
    BuiltPolicy built = make_policy(entry, config);  // on every rank: the same parameter errors everywhere
    nlohmann::json resolved = config.resolved;
    resolved["policy"] = built.resolved;
    std::optional<RealCheckpoint> checkpoint;
    if (leader && options.resume) checkpoint = load_checkpoint(result.out_dir, entry.label);
    if (agree_skip(comm, checkpoint && checkpoint->finished, entry.label)) {
      if (leader) result.outcomes.push_back(checkpoint->outcome);
      continue;
    }
    env::RealWorker worker(worker_spec(config, comm.rank()), data, comm);
    if (!leader) {
      follow_policy(worker, comm);
      continue;
    }
    if (checkpoint) load_checkpoint_model(result.out_dir, entry.label, worker.replicas().model(0));
    auto after_epoch = [&](const RealCheckpoint& c) {
      PolicyOutcome partial = c.outcome;
      partial.params = built.resolved;
      write_results(result.out_dir, partial, result.outcomes, config, resolved);
      save_checkpoint(result.out_dir, c, &worker.replicas().model(0));
    };
    PolicyOutcome outcome = lead_policy(config, entry, *built.policy, worker, comm, data->test, progress, checkpoint, after_epoch);
    outcome.params = built.resolved;
    write_results(result.out_dir, outcome, result.outcomes, config, resolved);
    RealCheckpoint done;
    done.finished = true;
    done.epochs_done = static_cast<int>(outcome.epochs.size());
    done.rounds = outcome.rounds;
    done.clock_ms = outcome.sim_time_s * 1000.0;
    done.outcome = outcome;
    save_checkpoint(result.out_dir, done, nullptr);
    result.outcomes.push_back(std::move(outcome));
  }
  if (leader) write_file_atomic(result.out_dir + "/comparison.md", comparison_table(result.outcomes, config.budget.target_accuracy));
  return result;
}

}  // namespace experiments
