#include "orchestra/barrier_controller.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace orchestra {
namespace {

[[noreturn]] void bad_option(const std::string& field, const std::string& expected, double got) {
  throw std::invalid_argument("orchestra barrier controller: " + field + ": expected " + expected + ", got " +
                              std::to_string(got));
}

void validate(const BarrierControllerOptions& o) {
  if (o.source == BarrierSource::Fixed && !(std::isfinite(o.fixed_barrier_ms) && o.fixed_barrier_ms > 0))
    bad_option("fixed_barrier_ms", "a positive number of ms", o.fixed_barrier_ms);
  if (o.max_step_spread < 0) bad_option("max_step_spread", "an integer >= 0", o.max_step_spread);
  if (o.max_local_steps < 1) bad_option("max_local_steps", "an integer >= 1", o.max_local_steps);
  if (!(std::isfinite(o.action_unit_ms) && o.action_unit_ms >= 0))
    bad_option("action_unit_ms", "a number of ms >= 0 (0: the fastest batch time)", o.action_unit_ms);
  if (o.probe_repetitions < 1) bad_option("probe_repetitions", "an integer >= 1", o.probe_repetitions);
  if (o.horizon_epochs < 0) bad_option("horizon_epochs", "an integer >= 0", o.horizon_epochs);
  for (std::size_t n = 0; n < o.batch_sizes.size(); ++n)
    if (o.batch_sizes[n] < 1) bad_option("batch_sizes[" + std::to_string(n) + "]", "an integer >= 1", o.batch_sizes[n]);
}

double median(std::vector<double> values) {
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

std::vector<int> resolve_batch_sizes(const BarrierControllerOptions& o, const env::ClusterView& cluster) {
  const auto n_workers = static_cast<std::size_t>(cluster.num_workers);
  const auto limit = [&cluster](std::size_t n) {
    return n < cluster.max_batch.size() && cluster.max_batch[n] > 0 ? cluster.max_batch[n]
                                                                    : std::numeric_limits<int>::max();
  };
  std::vector<int> sizes = o.batch_sizes;
  if (sizes.empty()) {
    const int equal = std::max(1, cluster.global_batch / cluster.num_workers);
    for (std::size_t n = 0; n < n_workers; ++n) sizes.push_back(std::min(equal, limit(n)));
    return sizes;
  }
  if (sizes.size() != n_workers)
    throw std::invalid_argument("orchestra barrier controller: batch_sizes: expected " + std::to_string(n_workers) +
                                " entries (one per worker), got " + std::to_string(sizes.size()));
  for (std::size_t n = 0; n < n_workers; ++n)
    if (sizes[n] > limit(n))
      throw std::invalid_argument("orchestra barrier controller: batch_sizes[" + std::to_string(n) + "] = " +
                                  std::to_string(sizes[n]) + " exceeds worker " + std::to_string(n) +
                                  "'s max_batch " + std::to_string(limit(n)));
  return sizes;
}

}  // namespace

BarrierControllerOptions BarrierControllerOptions::fixed_t(double barrier_ms) {
  BarrierControllerOptions options;
  options.source = BarrierSource::Fixed;
  options.fixed_barrier_ms = barrier_ms;
  return options;
}

BarrierController::BarrierController(BarrierControllerOptions options) : options_(std::move(options)) {
  validate(options_);
}

std::string BarrierController::name() const {
  return options_.source == BarrierSource::Lcm ? "orchestra-lcm" : "fixed-t";
}

bool BarrierController::lcm_owns_barrier() const {
  return options_.source == BarrierSource::Lcm && options_.rerun_lcm_each_epoch && !moved_ && !agent_;
}

void BarrierController::require_started(const char* what) const {
  if (!started_) throw std::logic_error(std::string("orchestra barrier controller: ") + what + " before start()");
}

void BarrierController::start(const env::ClusterView& cluster) {
  if (cluster.num_workers < 1)
    throw std::invalid_argument("orchestra barrier controller: the cluster has no workers");
  if (!cluster.probe_step_ms)
    throw std::invalid_argument(
        "orchestra barrier controller: ClusterView::probe_step_ms is not set; per-worker batch times are needed "
        "for tau_n = T / t_b^n");
  num_workers_ = cluster.num_workers;
  batch_sizes_ = resolve_batch_sizes(options_, cluster);

  // t_b^n: median of a few probes, so one slow first step (allocator, autotuning) does not count.
  batch_ms_.assign(static_cast<std::size_t>(num_workers_), 0);
  for (int n = 0; n < num_workers_; ++n) {
    const auto worker = static_cast<std::size_t>(n);
    std::vector<double> probes;
    for (int r = 0; r < options_.probe_repetitions; ++r) probes.push_back(cluster.probe_step_ms(n, batch_sizes_[worker]));
    batch_ms_[worker] = median(probes);
    if (!std::isfinite(batch_ms_[worker]) || batch_ms_[worker] <= 0)
      throw std::runtime_error("orchestra barrier controller: probing worker " + std::to_string(n) +
                               " gave a batch time of " + std::to_string(batch_ms_[worker]) + " ms");
  }
  // C for the Utilization objective: the cost model's all-reduce over every worker (a round of
  // Eq. 2 averages all of them), until measured rounds replace it.
  comm_ms_ = cluster.allreduce_ms ? cluster.allreduce_ms(num_workers_) : 0.0;
  if (!std::isfinite(comm_ms_) || comm_ms_ < 0) comm_ms_ = 0;
  unit_ms_ = options_.action_unit_ms > 0 ? options_.action_unit_ms
                                         : *std::min_element(batch_ms_.begin(), batch_ms_.end());

  partition_.emplace(batch_sizes_);
  partition_->set_batch_times(batch_ms_);
  shares_ = partition_->shares();

  moved_ = false;
  lcm_ = LcmResult{};
  if (options_.source == BarrierSource::Lcm) {
    run_lcm();
  } else {
    barrier_ms_ = options_.fixed_barrier_ms;
  }
  update_local_steps();

  epoch_compute_ms_.assign(static_cast<std::size_t>(num_workers_), 0);
  epoch_steps_.assign(static_cast<std::size_t>(num_workers_), 0);
  epoch_rounds_ = RoundSummary{};
  last_rounds_ = RoundSummary{};
  last_epoch_.reset();
  accuracy_before_last_ = std::numeric_limits<double>::quiet_NaN();
  last_accuracy_ = std::numeric_limits<double>::quiet_NaN();
  epochs_done_ = 0;
  started_ = true;
}

void BarrierController::run_lcm() {
  lcm_ = lcm_barrier(batch_ms_, LcmOptions{options_.max_step_spread, options_.max_local_steps, options_.lcm_objective, comm_ms_});
  barrier_ms_ = lcm_.barrier_ms;
}

void BarrierController::update_local_steps() {
  // Orchestra 3.1.3: tau_n = T* / t_b^n, floored (whole steps) and kept within [1, max_local_steps].
  local_steps_.resize(batch_ms_.size());
  for (std::size_t n = 0; n < batch_ms_.size(); ++n)
    local_steps_[n] = std::clamp(steps_within(barrier_ms_, batch_ms_[n]), 1, options_.max_local_steps);
}

env::RoundPlan BarrierController::plan(const env::PlanContext& context) {
  require_started("plan()");
  // 3.1.3: "The agent will try to adjust this value at the beginning of each epoch."
  if (context.epoch_start && agent_) move_barrier(agent_->act(observation()));

  env::RoundPlan plan;
  plan.aggregation = env::Aggregation::ModelAverage;
  plan.weighting = env::AverageWeighting::Uniform;  // Eq. 2: 1/N
  plan.workers.resize(batch_ms_.size());
  for (std::size_t n = 0; n < batch_ms_.size(); ++n) plan.workers[n] = {batch_sizes_[n], local_steps_[n]};
  if (options_.partition == DataPartition::Speed) plan.data_shares = shares_;
  plan.barrier_ms = barrier_ms_;
  return plan;
}

void BarrierController::move_barrier(int action) {
  if (action < -1 || action > 1)
    throw std::invalid_argument("orchestra barrier controller: action must be -1, 0 or +1 (decrease, keep or "
                                "increase T by one unit), got " + std::to_string(action));
  require_started("move_barrier()");
  moved_ = true;
  const double fastest = *std::min_element(batch_ms_.begin(), batch_ms_.end());
  barrier_ms_ = std::clamp(barrier_ms_ + action * unit_ms_, fastest, options_.max_local_steps * fastest);
  update_local_steps();
}

void BarrierController::observe_round(const env::RoundReport& report) {
  require_started("observe_round()");
  if (report.workers.size() != batch_ms_.size())
    throw std::invalid_argument("orchestra barrier controller: round report has " +
                                std::to_string(report.workers.size()) + " workers, expected " +
                                std::to_string(batch_ms_.size()));
  for (std::size_t n = 0; n < batch_ms_.size(); ++n) {
    const env::WorkerRoundStats& w = report.workers[n];
    const bool full_batches = static_cast<std::int64_t>(w.samples) >=
                              static_cast<std::int64_t>(w.local_steps) * batch_sizes_[n];
    if (w.local_steps > 0 && std::isfinite(w.compute_ms) && w.compute_ms > 0 && full_batches) {
      epoch_compute_ms_[n] += w.compute_ms;
      epoch_steps_[n] += w.local_steps;
    }
  }
  epoch_rounds_.add(report);
}

void BarrierController::observe_epoch(const env::EpochReport& report) {
  require_started("observe_epoch()");
  // t_b^n = measured compute / steps over the epoch's full-batch rounds.
  for (std::size_t n = 0; n < batch_ms_.size(); ++n) {
    if (epoch_steps_[n] > 0) batch_ms_[n] = epoch_compute_ms_[n] / static_cast<double>(epoch_steps_[n]);
  }
  // 3.1.2: shares from this epoch's speeds (batches per second from the performance monitor).
  partition_->update(report);
  shares_ = partition_->shares();
  if (epoch_rounds_.rounds > 0) comm_ms_ = epoch_rounds_.comm_ms / static_cast<double>(epoch_rounds_.rounds);
  // 3.1.1: the batch numbers follow the current performance into the next epoch.
  if (lcm_owns_barrier()) run_lcm();
  update_local_steps();

  accuracy_before_last_ = last_accuracy_;
  last_accuracy_ = report.accuracy;
  last_epoch_ = report;
  last_rounds_ = epoch_rounds_;
  epoch_rounds_ = RoundSummary{};
  epoch_rounds_.global_rounds = last_rounds_.global_rounds;
  std::fill(epoch_compute_ms_.begin(), epoch_compute_ms_.end(), 0.0);
  std::fill(epoch_steps_.begin(), epoch_steps_.end(), 0);
  ++epochs_done_;
}

std::vector<float> BarrierController::observation() const {
  require_started("observation()");
  StateInputs inputs;
  inputs.epoch = last_epoch_ ? &*last_epoch_ : nullptr;
  inputs.previous_accuracy = accuracy_before_last_;
  inputs.rounds = last_rounds_;
  inputs.epochs_done = epochs_done_;
  inputs.horizon_epochs = options_.horizon_epochs;
  inputs.barrier_ms = barrier_ms_;
  inputs.batch_ms = batch_ms_;
  inputs.local_steps = local_steps_;
  inputs.max_local_steps = options_.max_local_steps;
  return build_state(inputs);
}

}  // namespace orchestra
