#include "experiments/runner/real_run.hpp"

#include "common/errors.hpp"
#include "common/json_diff.hpp"
#include "env/real/real_cluster.hpp"
#include "env/real/real_worker.hpp"
#include "env/train/device.hpp"
#include "experiments/results/results_folder.hpp"
#include "experiments/runner/real_checkpoint.hpp"
#include "experiments/runner/run_loop.hpp"

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

// Rank 0 through the one run loop. A failure of rank 0's own (a plan error, a results file it
// cannot write) is sent to the other ranks as Abort before it is rethrown, so they stop with that
// message instead of timing out.
PolicyOutcome lead_policy(const ExperimentConfig& config, const ExperimentPolicy& policy, env::RealWorker& worker, env::Communicator& comm,
                          const env::Dataset& test, Progress& progress, const std::optional<RunCheckpoint>& checkpoint,
                          const EpochCallback& after_epoch) {
  std::optional<env::ResumePoint> resume;
  if (checkpoint) resume = env::ResumePoint{checkpoint->epochs_done, checkpoint->rounds, checkpoint->clock_ms};
  env::RealCluster cluster({config.cluster, config.network, config.global_batch}, worker, comm, test, resume);
  try {
    PolicyOutcome outcome = run_policy(config, policy.entry, *policy.policy, cluster, progress, checkpoint, after_epoch);
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

// What every rank must run alike: the experiment (experiment_identity) and its policies' keys,
// without the paths that may differ from machine to machine (data.path, policy and surrogate files).
nlohmann::json group_identity(const Experiment& experiment) {
  nlohmann::json id = experiment_identity(experiment.config.resolved);
  if (id.contains("data") && id["data"].is_object()) id["data"].erase("path");
  if (id.contains("runtime") && id["runtime"].is_object()) id["runtime"].erase("surrogate");
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& p : experiment.policies) {
    nlohmann::json params = p.params;
    if (params.is_object())
      for (const char* key : {"policy", "surrogate"}) params.erase(key);
    policies.push_back({{"label", p.entry.label}, {"params", params}});
  }
  id["policies"] = std::move(policies);
  return id;
}

// Machines given other configs (another seed, lr or cluster) trained together without a word,
// each rank by its own plan. Rank 0's experiment goes to every rank; each says whether its own
// differs, and every rank stops with one line: the differing ones name the keys.
void check_same_experiment(env::Communicator& comm, const Experiment& experiment) {
  const nlohmann::json mine = group_identity(experiment);
  const nlohmann::json first = nlohmann::json::parse(env::broadcast_bytes(comm, mine.dump(), 0, "rank 0's config, to compare"));
  const bool differs = first != mine;
  const torch::Tensor flags = comm.all_gather(torch::full({1}, differs ? 1 : 0, torch::kInt64), "which ranks run another config");
  std::string others;
  for (int r = 0; r < comm.world_size(); ++r)
    if (flags[r][0].item<std::int64_t>() != 0) others += (others.empty() ? "" : ", ") + std::to_string(r);
  if (others.empty()) return;
  if (differs)
    throw common::ConfigError("rank " + std::to_string(comm.rank()) + "'s config is not rank 0's: " + common::describe_differences(first, mine) +
                              " (rank 0's, now this machine's): give every machine the same config");
  throw common::ConfigError("rank(s) " + others + " run another config than rank 0's (their machines name the keys): give every machine the same config");
}

}  // namespace

void check_real_config(const ExperimentConfig& config, int world_size) {
  if (config.mode != ClusterMode::Real)
    throw common::ConfigError(config.mode_where + ": cluster.mode: launch runs real clusters; this config is simulated (set cluster.mode: real, or use orchestra run)");
  if (config.cluster.num_workers() != world_size)
    throw common::ConfigError(config.file + ": cluster: lists " + std::to_string(config.cluster.num_workers()) + " workers but the launch starts " +
                              std::to_string(world_size) + " processes (one per worker, in cluster order)");
  if (config.training.timing_only) throw common::ConfigError(config.file + ": training.timing_only: a real run trains for real; remove it");
  check_device(config);
}

RealRunCluster::RealRunCluster(env::Communicator& comm, std::string out_dir, bool resume, std::optional<torch::Device> device)
    : comm_(comm), out_dir_(std::move(out_dir)), resume_(resume), requested_device_(device) {}

void RealRunCluster::prepare(Experiment& experiment) {
  ExperimentConfig& config = experiment.config;
  config.resolved["real"] = {{"world_size", comm_.world_size()}, {"backend", comm_.describe().substr(0, comm_.describe().find(' '))},
                             {"timeout_s", comm_.timeout().count() / 1000.0}};
  check_real_config(config, comm_.world_size());
  check_same_experiment(comm_, experiment);
  device_ = requested_device_ ? *requested_device_ : env::rank_device(config.training.device, 0);
  // Every rank holds the data set in memory, on its device, but only ever reads its own samples (RealWorker).
  data_ = env::place_on(std::make_shared<const env::DatasetPair>(env::load_dataset(config.data, config.seed)), device_);
}

void RealRunCluster::run(const Experiment& experiment, ExperimentPolicy& policy, Progress& progress, ResultsWriter& writer) {
  const ExperimentConfig& config = experiment.config;
  const std::string& label = policy.entry.label;
  const bool leader = writes_results();
  std::optional<RunCheckpoint> checkpoint;
  if (leader && resume_) checkpoint = load_checkpoint(out_dir_, label);
  if (agree_skip(comm_, checkpoint && checkpoint->finished, label)) {
    if (leader) writer.add_written(checkpoint->outcome);
    return;
  }
  env::RealWorker worker(worker_spec(config, comm_.rank(), device_), data_, comm_);
  if (!leader) {
    env::follow_policy(worker, comm_);
    return;
  }
  nlohmann::json resolved = config.resolved;
  resolved["policy"] = policy.params;
  if (checkpoint) load_checkpoint_model(out_dir_, label, worker.replicas().model(0));
  auto after_epoch = [&](const RunCheckpoint& c) {
    PolicyOutcome partial = c.outcome;
    partial.params = policy.params;
    writer.write_partial(partial);
    save_checkpoint(out_dir_, c, &worker.replicas().model(0), resolved);
  };
  PolicyOutcome outcome = lead_policy(config, policy, worker, comm_, data_->test, progress, checkpoint, after_epoch);
  outcome.params = policy.params;
  RunCheckpoint done;
  done.finished = true;
  done.epochs_done = static_cast<int>(outcome.epochs.size());
  done.rounds = outcome.rounds;
  done.clock_ms = outcome.sim_time_s * 1000.0;
  done.outcome = outcome;
  writer.write_finished(std::move(outcome));
  save_checkpoint(out_dir_, done, nullptr, resolved);
}

ExperimentResult run_real_experiment(ExperimentConfig config, env::Communicator& comm, const RunOptions& options, std::optional<torch::Device> device) {
  Experiment experiment = resolve_experiment(std::move(config), options.overrides);
  RealRunCluster cluster(comm, results_dir(experiment.config, options), options.resume, device);
  return run_experiment(experiment, cluster, options);
}

}  // namespace experiments
