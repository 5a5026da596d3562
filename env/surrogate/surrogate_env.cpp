#include "env/surrogate/surrogate_env.hpp"

#include <cmath>
#include <stdexcept>

#include "common/errors.hpp"
#include "env/sim/round_rules.hpp"

namespace env {
namespace {

const SurrogateModel& checked(const std::shared_ptr<const SurrogateModel>& model) {
  if (!model) throw std::invalid_argument("SurrogateEnv: no surrogate model");
  return *model;
}

}  // namespace

SurrogateEnv::SurrogateEnv(SurrogateEnvSpec spec, std::shared_ptr<const SurrogateModel> model, std::uint64_t seed)
    : spec_(std::move(spec)), model_(std::move(model)), dynamics_(checked(model_)), rng_(derive_seed(seed, 41)) {
  SimulationSpec simulation = spec_.simulation;
  if (simulation.train_samples <= 0) simulation.train_samples = model_->task.train_samples;
  if (simulation.message_bytes <= 0) simulation.message_bytes = 4.0 * static_cast<double>(model_->task.parameters);
  if (simulation.train_samples <= 0) throw std::invalid_argument("SurrogateEnv: the environment needs train_samples > 0");
  if (simulation.message_bytes <= 0) throw std::invalid_argument("SurrogateEnv: the environment needs message_bytes > 0");
  replicas_.assign(static_cast<std::size_t>(simulation.cluster.num_workers()), ReplicaState{});
  global_ = dynamics_.start(rng_);
  simulation_ = std::make_unique<Simulation>(std::move(simulation), seed, static_cast<TrainingHooks*>(this));
}

RoundReport SurrogateEnv::run_round(const RoundPlan& plan) {
  if (plan.aggregation == Aggregation::ModelAverage && (plan.weighting == AverageWeighting::FedNova || plan.outer))
    throw common::PlanError(
        "the surrogate of training models plain model averaging: FedNova's weighting and an outer optimizer are not modelled "
        "(run this policy with real training)");
  return simulation_->run_round(plan);
}

EpochReport SurrogateEnv::finish_epoch() {
  EpochReport report = simulation_->finish_epoch();
  report.accuracy = global_.accuracy;
  report.loss = global_.loss;
  return report;
}

void SurrogateEnv::begin_epoch(int epoch) {
  lr_factor_ = spec_.cosine_lr ? cosine_learning_rate(1.0, epoch, spec_.planned_epochs) : 1.0;
}

double SurrogateEnv::local_step(int worker, double batch) {
  ReplicaState& replica = replicas_[static_cast<std::size_t>(worker)];
  const double loss = dynamics_.draw_train_loss(replica, global_, rng_);  // the forward pass sees the state before the update
  dynamics_.advance(replica, 1.0, batch, lr_factor_);
  return loss;
}

double SurrogateEnv::gradient_round(const std::vector<IndexSpan>& batches) {
  // One step of every member at its batch, then the average weighted by B_i / B (see the header).
  std::vector<int> members;
  std::vector<double> weights;
  double total = 0, loss = 0;
  for (std::size_t i = 0; i < batches.size(); ++i) total += static_cast<double>(batches[i].size);
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (batches[i].size == 0) continue;
    const double share = static_cast<double>(batches[i].size) / total;
    loss += share * local_step(static_cast<int>(i), static_cast<double>(batches[i].size));
    members.push_back(static_cast<int>(i));
    weights.push_back(share);
  }
  std::vector<int> everyone(replicas_.size());
  for (std::size_t i = 0; i < everyone.size(); ++i) everyone[i] = static_cast<int>(i);
  if (!members.empty()) average(AverageGroup{members, weights}, everyone);
  return loss;
}

std::vector<double> SurrogateEnv::local_steps(const std::vector<std::vector<IndexSpan>>& batches) {
  std::vector<double> losses;
  for (std::size_t i = 0; i < batches.size(); ++i)
    for (const IndexSpan& batch : batches[i]) losses.push_back(local_step(static_cast<int>(i), static_cast<double>(batch.size)));
  return losses;
}

void SurrogateEnv::average(const AverageGroup& group, const std::vector<int>& receivers) {
  member_states_.clear();
  for (int m : group.members) member_states_.push_back(&replicas_[static_cast<std::size_t>(m)]);
  const ReplicaState averaged = dynamics_.average(member_states_, group.weights, &rng_);
  for (int r : receivers) replicas_[static_cast<std::size_t>(r)] = averaged;
  // The global model is what every worker holds after a global average (MLLSGD's server averages
  // reach only their members).
  if (receivers.size() == replicas_.size()) dynamics_.observe(global_, averaged, &rng_);
}

}  // namespace env
