#include "env/baselines/baselines.hpp"

#include <string>

#include "common/errors.hpp"

namespace env {

RoundPlan averaging_plan(const ClusterView& cluster, int batch, int steps) {
  RoundPlan plan;
  plan.aggregation = Aggregation::ModelAverage;
  const std::vector<int> batches = batch > 0 ? std::vector<int>(static_cast<std::size_t>(cluster.num_workers), batch)
                                             : equal_split(cluster, cluster.global_batch);
  for (int i = 0; i < cluster.num_workers; ++i) {
    const int b = batches[static_cast<std::size_t>(i)];
    if (b > cluster.max_batch[static_cast<std::size_t>(i)])
      throw common::PlanError("worker " + cluster.worker_names[static_cast<std::size_t>(i)] + ": local batch " + std::to_string(b) +
                           " exceeds its max_batch " + std::to_string(cluster.max_batch[static_cast<std::size_t>(i)]));
    plan.workers.push_back({b, steps});
  }
  return plan;
}

std::vector<int> equal_split(const ClusterView& cluster, int total) {
  const int n = cluster.num_workers;
  std::vector<int> out(static_cast<std::size_t>(n), total / n);
  for (int i = 0; i < total % n; ++i) ++out[static_cast<std::size_t>(i)];
  for (int i = 0; i < n; ++i)
    if (out[static_cast<std::size_t>(i)] > cluster.max_batch[static_cast<std::size_t>(i)])
      throw common::PlanError("an equal split of the global batch " + std::to_string(total) + " gives worker " +
                           cluster.worker_names[static_cast<std::size_t>(i)] + " " + std::to_string(out[static_cast<std::size_t>(i)]) +
                           " samples, over its max_batch " + std::to_string(cluster.max_batch[static_cast<std::size_t>(i)]));
  return out;
}

void DsgdPolicy::start(const ClusterView& cluster) {
  plan_ = RoundPlan{};
  plan_.aggregation = Aggregation::GradientAllReduce;
  for (int b : equal_split(cluster, cluster.global_batch)) plan_.workers.push_back({b, 1});
}

RoundPlan DsgdPolicy::plan(const PlanContext&) { return plan_; }

void LocalSgdPolicy::start(const ClusterView& cluster) {
  plan_ = averaging_plan(cluster, options_.batch, options_.period);
  plan_.weighting = options_.weighting;
}

RoundPlan LocalSgdPolicy::plan(const PlanContext&) { return plan_; }

void MllsgdPolicy::start(const ClusterView& cluster) {
  plan_ = averaging_plan(cluster, options_.batch, options_.global_period);
  plan_.server_average_every = options_.server_period;
}

RoundPlan MllsgdPolicy::plan(const PlanContext&) { return plan_; }

void OsaPolicy::start(const ClusterView& cluster) { plan_ = averaging_plan(cluster, batch_, kUntilShardEnd); }

RoundPlan OsaPolicy::plan(const PlanContext&) { return plan_; }

}  // namespace env
