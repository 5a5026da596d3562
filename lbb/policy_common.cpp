#include "lbb/policy_common.hpp"

#include <cstdint>
#include <stdexcept>

#include "common/errors.hpp"

namespace lbb {

// A PlanError: the cluster cannot run this policy, which a run reports as the config's error,
// naming the policy's entry (experiments/runner/simulated_cluster.cpp, preflight).
void validate_cluster(const env::ClusterView& cluster, const std::string& policy) {
  const std::string who = policy + ": ";
  if (cluster.num_workers <= 0)
    throw common::PlanError(who + "the cluster has no workers (num_workers = " +
                                std::to_string(cluster.num_workers) + ")");
  if (cluster.max_batch.size() != static_cast<std::size_t>(cluster.num_workers))
    throw common::PlanError(who + "expected a max_batch per worker (" + std::to_string(cluster.num_workers) +
                                "), got " + std::to_string(cluster.max_batch.size()));
  if (cluster.global_batch <= 0)
    throw common::PlanError(who + "the global batch must be positive, got " + std::to_string(cluster.global_batch));
  std::int64_t capacity = 0;
  for (std::size_t i = 0; i < cluster.max_batch.size(); ++i) {
    if (cluster.max_batch[i] < 0)
      throw common::PlanError(who + "worker " + std::to_string(i) + " has a negative max batch (" +
                                  std::to_string(cluster.max_batch[i]) + ")");
    capacity += cluster.max_batch[i];
  }
  if (capacity < cluster.global_batch)
    throw common::PlanError(who + "the workers' max batches sum to " + std::to_string(capacity) +
                                ", less than the global batch " + std::to_string(cluster.global_batch));
}

env::RoundPlan allreduce_plan(const std::vector<int>& batch_sizes) {
  env::RoundPlan plan;
  plan.aggregation = env::Aggregation::GradientAllReduce;
  plan.workers.resize(batch_sizes.size());
  for (std::size_t i = 0; i < batch_sizes.size(); ++i) {
    plan.workers[i].batch_size = batch_sizes[i];
    plan.workers[i].local_steps = 1;
  }
  return plan;
}

RoundMeasurements measurements_of(const env::RoundReport& report) {
  RoundMeasurements m;
  for (const auto& w : report.workers) {
    m.batch_sizes.push_back(w.batch_size);
    m.compute_ms.push_back(w.compute_ms);
  }
  return m;
}

}  // namespace lbb
