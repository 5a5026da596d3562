#include "lbb/boa_policy.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "lbb/batch_split.hpp"
#include "lbb/policy_common.hpp"

namespace lbb {
namespace {

// A worker's linear model refitted from one epoch's points; `previous` gives the start-up time
// when the points cannot (one batch size only).
env::BatchTimeModel refit(const std::vector<env::BatchTimePoint>& points, const env::BatchTimeModel* previous) {
  std::vector<double> batches;
  double sum_ms = 0.0;
  for (const auto& p : points) batches.push_back(p.batch), sum_ms += p.ms;
  std::sort(batches.begin(), batches.end());
  if (std::unique(batches.begin(), batches.end()) - batches.begin() >= 2) {
    env::BatchTimeModel line = env::BatchTimeModel::fit(points, 1);
    if (line.coefficients().size() == 2 && line.coefficients()[1] > 0) return env::BatchTimeModel(line.coefficients());
  }
  // One batch size (or a noisy line that does not rise): anchor at a0 through the mean.
  double batch = 0.0;
  for (const auto& p : points) batch += p.batch;
  batch /= static_cast<double>(points.size());
  const double mean_ms = sum_ms / static_cast<double>(points.size());
  const double a0 = previous ? std::max(0.0, previous->coefficients().front()) : 0.0;
  if (mean_ms > a0) return env::BatchTimeModel({a0, (mean_ms - a0) / batch});
  return env::BatchTimeModel({0.0, mean_ms / batch});
}

}  // namespace

BoaPolicy::BoaPolicy(BoaOptions options) : options_(std::move(options)) {}

void BoaPolicy::start(const env::ClusterView& cluster) {
  validate_cluster(cluster, "BOA");
  const std::size_t n = static_cast<std::size_t>(cluster.num_workers);
  global_batch_ = cluster.global_batch;
  max_batch_ = cluster.max_batch;
  models_.assign(n, env::BatchTimeModel());
  known_.assign(n, 0);
  epoch_points_.assign(n, {});
  allocation_ = {};
  rebalances_ = 0;
  if (!options_.profiling) {
    batch_sizes_ = equal_split(global_batch_, max_batch_);
    return;
  }
  if (!cluster.probe_step_ms) throw std::invalid_argument("BOA: profiling needs the cluster's probe_step_ms");
  for (std::size_t i = 0; i < n; ++i) {
    const int up_to = std::min(max_batch_[i], global_batch_);
    if (up_to <= 0) continue;
    models_[i] = profile_worker(cluster.probe_step_ms, static_cast<int>(i), up_to, options_.profile).model;
    known_[i] = 1;
  }
  allocation_ = solve_min_max(models_, max_batch_, global_batch_);
  batch_sizes_ = allocation_.batch_sizes;
}

env::RoundPlan BoaPolicy::plan(const env::PlanContext& context) {
  if (batch_sizes_.empty()) throw std::logic_error("BOA: plan() before start()");
  if (context.epoch_start) {
    const bool measured = std::any_of(epoch_points_.begin(), epoch_points_.end(),
                                      [](const auto& points) { return !points.empty(); });
    if (measured) rebalance();
  }
  return allreduce_plan(batch_sizes_);
}

void BoaPolicy::observe_round(const env::RoundReport& report) {
  if (report.workers.size() != batch_sizes_.size())
    throw std::invalid_argument("BOA: the round report has " + std::to_string(report.workers.size()) +
                                " workers, the plan " + std::to_string(batch_sizes_.size()));
  for (std::size_t i = 0; i < report.workers.size(); ++i) {
    const auto& w = report.workers[i];
    if (w.batch_size > 0 && w.compute_ms > 0) epoch_points_[i].push_back({static_cast<double>(w.batch_size), w.compute_ms});
  }
}

void BoaPolicy::rebalance() {
  std::int64_t capacity = 0;
  for (std::size_t i = 0; i < models_.size(); ++i) {
    if (!epoch_points_[i].empty()) {
      models_[i] = refit(epoch_points_[i], known_[i] ? &models_[i] : nullptr);
      known_[i] = 1;
    }
    epoch_points_[i].clear();
    if (known_[i]) capacity += max_batch_[i];
  }
  // Workers never measured (taken out from the start) stay out while the others can hold B.
  if (capacity < global_batch_) return;
  std::vector<int> limits = max_batch_;
  for (std::size_t i = 0; i < limits.size(); ++i)
    if (!known_[i]) limits[i] = 0;
  allocation_ = solve_min_max(models_, limits, global_batch_);
  batch_sizes_ = allocation_.batch_sizes;
  ++rebalances_;
}

}  // namespace lbb
