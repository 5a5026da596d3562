#include "lbb/lbb_policy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "lbb/batch_split.hpp"
#include "lbb/policy_common.hpp"

namespace lbb {

LbbPolicy::LbbPolicy(LbbOptions options) : options_(std::move(options)) {}

void LbbPolicy::start(const env::ClusterView& cluster) {
  validate_cluster(cluster, "LBB");
  const std::size_t n = static_cast<std::size_t>(cluster.num_workers);
  const int global_batch = cluster.global_batch;
  profiles_.clear();
  profiled_ = {};
  last_tune_ = {};
  stats_ = {};
  std::vector<RoughModel> rough(n);
  if (options_.profiling) {
    if (!cluster.probe_step_ms) throw std::invalid_argument("LBB: profiling needs the cluster's probe_step_ms");
    std::vector<env::BatchTimeModel> models(n);
    profiles_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const int up_to = std::min(cluster.max_batch[i], global_batch);
      if (up_to <= 0) continue;  // no memory for even one sample: never used
      profiles_[i] = profile_worker(cluster.probe_step_ms, static_cast<int>(i), up_to, options_.profile);
      models[i] = profiles_[i].model;
    }
    profiled_ = solve_min_max(models, cluster.max_batch, global_batch);  // Alg. 1 lines 27-28
    batch_sizes_ = profiled_.batch_sizes;
    // The tuner's rough models start as the profiled models' secants through the start-up time
    // a0 (Eq. 1 second line); only a0 survives a rapid tune (Alg. 2 line 3).
    for (std::size_t i = 0; i < n; ++i) {
      if (profiles_[i].points.empty()) continue;
      const auto& model = profiles_[i].model;
      const double a0 = std::max(0.0, model.coefficients().front());
      const int at = batch_sizes_[i] > 0 ? batch_sizes_[i] : std::min(cluster.max_batch[i], global_batch);
      const double t = model.eval(at);
      rough[i] = t > a0 ? RoughModel{a0, (t - a0) / at} : RoughModel{0.0, t / at};
    }
  } else {
    batch_sizes_ = equal_split(global_batch, cluster.max_batch);
  }
  tuner_.reset();
  if (options_.dynamic_tuning) tuner_.emplace(options_.tuning, std::move(rough), cluster.max_batch, global_batch);
}

env::RoundPlan LbbPolicy::plan(const env::PlanContext& context) {
  (void)context;  // LBB re-plans after every iteration, not on epochs
  if (batch_sizes_.empty()) throw std::logic_error("LBB: plan() before start()");
  return allreduce_plan(batch_sizes_);
}

void LbbPolicy::observe_round(const env::RoundReport& report) {
  if (report.workers.size() != batch_sizes_.size())
    throw std::invalid_argument("LBB: the round report has " + std::to_string(report.workers.size()) +
                                " workers, the plan " + std::to_string(batch_sizes_.size()));
  ++stats_.rounds_observed;
  if (!tuner_) return;
  const RoundMeasurements measured = measurements_of(report);
  if (measured.batch_sizes != batch_sizes_) {
    ++stats_.skipped_rounds;
    return;
  }
  last_tune_ = tuner_->tune(batch_sizes_, measured.compute_ms);
  if (last_tune_.action == TuneAction::Fine) ++stats_.fine_tunes;
  if (last_tune_.action == TuneAction::Rapid) ++stats_.rapid_tunes;
  batch_sizes_ = last_tune_.batch_sizes;
}

}  // namespace lbb
