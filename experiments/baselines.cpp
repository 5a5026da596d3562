#include "experiments/baselines.hpp"

#include <string>

#include "env/errors.hpp"

namespace experiments {
namespace {

env::RoundPlan averaging_plan(const env::ClusterView& cluster, int batch, int steps) {
  env::RoundPlan plan;
  plan.aggregation = env::Aggregation::ModelAverage;
  const std::vector<int> batches = batch > 0 ? std::vector<int>(static_cast<std::size_t>(cluster.num_workers), batch)
                                             : equal_split(cluster, cluster.global_batch);
  for (int i = 0; i < cluster.num_workers; ++i) {
    const int b = batches[static_cast<std::size_t>(i)];
    if (b > cluster.max_batch[static_cast<std::size_t>(i)])
      throw env::PlanError("worker " + cluster.worker_names[static_cast<std::size_t>(i)] + ": local batch " + std::to_string(b) +
                           " exceeds its max_batch " + std::to_string(cluster.max_batch[static_cast<std::size_t>(i)]));
    plan.workers.push_back({b, steps});
  }
  return plan;
}

}  // namespace

std::vector<int> equal_split(const env::ClusterView& cluster, int total) {
  const int n = cluster.num_workers;
  std::vector<int> out(static_cast<std::size_t>(n), total / n);
  for (int i = 0; i < total % n; ++i) ++out[static_cast<std::size_t>(i)];
  for (int i = 0; i < n; ++i)
    if (out[static_cast<std::size_t>(i)] > cluster.max_batch[static_cast<std::size_t>(i)])
      throw env::PlanError("an equal split of the global batch " + std::to_string(total) + " gives worker " +
                           cluster.worker_names[static_cast<std::size_t>(i)] + " " + std::to_string(out[static_cast<std::size_t>(i)]) +
                           " samples, over its max_batch " + std::to_string(cluster.max_batch[static_cast<std::size_t>(i)]));
  return out;
}

void DsgdPolicy::start(const env::ClusterView& cluster) {
  plan_ = env::RoundPlan{};
  plan_.aggregation = env::Aggregation::GradientAllReduce;
  for (int b : equal_split(cluster, cluster.global_batch)) plan_.workers.push_back({b, 1});
}

env::RoundPlan DsgdPolicy::plan(const env::PlanContext&) { return plan_; }

void LocalSgdPolicy::start(const env::ClusterView& cluster) {
  plan_ = averaging_plan(cluster, options_.batch, options_.period);
  if (options_.sample_weighted) plan_.weighting = env::AverageWeighting::BySamples;
}

env::RoundPlan LocalSgdPolicy::plan(const env::PlanContext&) { return plan_; }

void MllsgdPolicy::start(const env::ClusterView& cluster) {
  plan_ = averaging_plan(cluster, options_.batch, options_.global_period);
  plan_.server_average_every = options_.server_period;
}

env::RoundPlan MllsgdPolicy::plan(const env::PlanContext&) { return plan_; }

void OsaPolicy::start(const env::ClusterView& cluster) { plan_ = averaging_plan(cluster, batch_, env::kUntilShardEnd); }

env::RoundPlan OsaPolicy::plan(const env::PlanContext&) { return plan_; }

}  // namespace experiments
