#include "orchestra/barrier_controller.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "common/number_text.hpp"
#include "orchestra/barrier_env.hpp"

namespace orchestra {
namespace {

// Every worker took a local step: the round averaged the whole cluster (see observe_round()).
bool whole_cluster_round(const env::RoundReport& report) {
  return std::all_of(report.workers.begin(), report.workers.end(),
                     [](const env::WorkerRoundStats& w) { return w.local_steps > 0; });
}

[[noreturn]] void bad_option(const std::string& field, const std::string& expected, double got) {
  throw std::invalid_argument("orchestra barrier controller: " + field + ": expected " + expected + ", got " +
                              common::shortest_number_text(got));
}

void validate(const BarrierControllerOptions& o) {
  if (o.source == BarrierSource::Fixed && !(std::isfinite(o.fixed_barrier_ms) && o.fixed_barrier_ms > 0))
    bad_option("fixed_barrier_ms", "a positive number of ms", o.fixed_barrier_ms);
  if (o.source == BarrierSource::CommMultiple && !(std::isfinite(o.comm_multiple) && o.comm_multiple > 0))
    bad_option("comm_multiple", "a positive factor", o.comm_multiple);
  if (!(std::isfinite(o.lcm_multiple) && o.lcm_multiple > 0)) bad_option("lcm_multiple", "a positive factor", o.lcm_multiple);
  if (!(std::isfinite(o.lcm_cap_steps) && o.lcm_cap_steps >= 0)) bad_option("lcm_cap_steps", "a number of steps >= 0 (0: none)", o.lcm_cap_steps);
  if (!(std::isfinite(o.lcm_cap_x_comm) && o.lcm_cap_x_comm >= 0)) bad_option("lcm_cap_x_comm", "a factor >= 0 (0: none)", o.lcm_cap_x_comm);
  if (!(std::isfinite(o.lcm_cap_above_steps) && o.lcm_cap_above_steps >= 0))
    bad_option("lcm_cap_above_steps", "a number of steps >= 0 (0: the cap acts everywhere)", o.lcm_cap_above_steps);
  if (o.lcm_cap_above_steps > 0 && o.lcm_cap_steps == 0 && o.lcm_cap_x_comm == 0)
    bad_option("lcm_cap_above_steps", "a limit on lcm_cap_steps / lcm_cap_x_comm, which are not set (0)", o.lcm_cap_above_steps);
  if (o.max_step_spread < 0) bad_option("max_step_spread", "an integer >= 0", o.max_step_spread);
  if (o.max_local_steps < 1) bad_option("max_local_steps", "an integer >= 1", o.max_local_steps);
  if (!(std::isfinite(o.action_unit_ms) && o.action_unit_ms >= 0))
    bad_option("action_unit_ms", "a number of ms >= 0 (0: the fastest batch time)", o.action_unit_ms);
  if (!(std::isfinite(o.move_factor) && o.move_factor > 1)) bad_option("move_factor", "a number > 1", o.move_factor);
  if (o.max_move < 1 || o.max_move > kMaxBarrierMove) bad_option("max_move", "an integer in [1, " + std::to_string(kMaxBarrierMove) + "]", o.max_move);
  if (o.interval_rounds < 1) bad_option("interval_rounds", "an integer >= 1", o.interval_rounds);
  if (!(std::isfinite(o.min_barrier_ms) && o.min_barrier_ms >= 0)) bad_option("min_barrier_ms", "a number of ms >= 0 (0: the default)", o.min_barrier_ms);
  if (!(std::isfinite(o.max_barrier_ms) && o.max_barrier_ms >= 0)) bad_option("max_barrier_ms", "a number of ms >= 0 (0: the default)", o.max_barrier_ms);
  if (!(std::isfinite(o.min_barrier_x_start) && o.min_barrier_x_start >= 0 && o.min_barrier_x_start <= 1))
    bad_option("min_barrier_x_start", "a factor in [0, 1] (0: none)", o.min_barrier_x_start);
  if (!(std::isfinite(o.max_barrier_x_start) && (o.max_barrier_x_start == 0 || o.max_barrier_x_start >= 1)))
    bad_option("max_barrier_x_start", "a factor >= 1 (0: none)", o.max_barrier_x_start);
  if (!(std::isfinite(o.floor_cap_steps) && o.floor_cap_steps >= 0))
    bad_option("floor_cap_steps", "a number of steps >= 0 (0: none)", o.floor_cap_steps);
  if (o.floor_cap_steps > 0 && o.min_barrier_x_start == 0)
    bad_option("floor_cap_steps", "a cap on min_barrier_x_start's floor, which is not set (0)", o.floor_cap_steps);
  if (!(std::isfinite(o.min_barrier_steps) && o.min_barrier_steps >= 0))
    bad_option("min_barrier_steps", "a number of steps >= 0 (0: none)", o.min_barrier_steps);
  if (o.min_barrier_ms > 0 && o.max_barrier_ms > 0 && o.max_barrier_ms < o.min_barrier_ms)
    bad_option("max_barrier_ms", "a number >= min_barrier_ms (" + std::to_string(o.min_barrier_ms) + ")", o.max_barrier_ms);
  if (o.probe_repetitions < 1) bad_option("probe_repetitions", "an integer >= 1", o.probe_repetitions);
  if (o.horizon_epochs < 0) bad_option("horizon_epochs", "an integer >= 0", o.horizon_epochs);
  if (!(o.hold_at_accuracy >= 0 && o.hold_at_accuracy <= 1)) bad_option("hold_at_accuracy", "an accuracy in [0, 1] (0: never)", o.hold_at_accuracy);
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

void BarrierController::StepTimes::reset(std::size_t workers) {
  compute_ms.assign(workers, 0.0);
  steps.assign(workers, 0);
}

void BarrierController::StepTimes::apply(std::vector<double>& estimate) const {
  for (std::size_t n = 0; n < estimate.size(); ++n)
    if (steps[n] > 0) estimate[n] = compute_ms[n] / static_cast<double>(steps[n]);
}

BarrierControllerOptions BarrierControllerOptions::fixed_t(double barrier_ms) {
  BarrierControllerOptions options;
  options.source = BarrierSource::Fixed;
  options.fixed_barrier_ms = barrier_ms;
  return options;
}

BarrierControllerOptions BarrierControllerOptions::fixed_t_x_comm(double comm_multiple) {
  BarrierControllerOptions options;
  options.source = BarrierSource::CommMultiple;
  options.comm_multiple = comm_multiple;
  return options;
}

BarrierController::BarrierController(BarrierControllerOptions options) : options_(std::move(options)) {
  validate(options_);
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
    // An internal invariant: probes come from validated time models (> 0 at every batch) or the
    // wall clock, so a bad time here is a bug, not the user's input.
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

  const auto [fastest, slowest] = std::minmax_element(batch_ms_.begin(), batch_ms_.end());
  min_barrier_ms_ = options_.min_barrier_ms > 0 ? options_.min_barrier_ms : *fastest;
  max_barrier_ms_ = options_.max_barrier_ms > 0 ? options_.max_barrier_ms : options_.max_local_steps * *slowest;
  max_barrier_ms_ = std::max(max_barrier_ms_, min_barrier_ms_);
  start_batch_ms_ = batch_ms_;
  train_samples_ = cluster.train_samples;

  moved_ = false;
  last_action_ = 0;
  holding_ = false;
  last_round_partial_ = false;
  lcm_ = LcmResult{};
  if (options_.source == BarrierSource::Lcm) {
    run_lcm();
  } else if (options_.source == BarrierSource::CommMultiple) {
    barrier_ms_ = std::max(options_.comm_multiple * comm_ms_, *fastest);  // below it every tau is 1 already
  } else {
    barrier_ms_ = options_.fixed_barrier_ms;
  }
  start_barrier_ms_ = barrier_ms_;
  if (options_.min_barrier_x_start > 0) {
    double floor_ms = options_.min_barrier_x_start * start_barrier_ms_;
    if (options_.floor_cap_steps > 0) floor_ms = std::min(floor_ms, options_.floor_cap_steps * *slowest);
    min_barrier_ms_ = std::max(min_barrier_ms_, floor_ms);
  }
  if (options_.min_barrier_steps > 0) min_barrier_ms_ = std::max(min_barrier_ms_, options_.min_barrier_steps * *slowest);
  if (options_.max_barrier_x_start > 0) max_barrier_ms_ = std::min(max_barrier_ms_, options_.max_barrier_x_start * start_barrier_ms_);
  max_barrier_ms_ = std::max(max_barrier_ms_, min_barrier_ms_);
  update_local_steps();

  epoch_times_.reset(batch_ms_.size());
  window_times_.reset(batch_ms_.size());
  window_comm_ms_ = 0;
  window_rounds_ = 0;
  epoch_comm_ms_ = 0;
  epoch_rounds_ = 0;
  epoch_samples_ = 0;
  window_ = DecisionWindow{};
  last_window_.reset();
  previous_window_.reset();
  clock_ms_ = 0;
  stretch_.reset();
  previous_stretch_.reset();
  first_loss_ = std::numeric_limits<double>::quiet_NaN();
  accuracy_before_last_ = std::numeric_limits<double>::quiet_NaN();
  last_accuracy_ = std::numeric_limits<double>::quiet_NaN();
  epochs_done_ = 0;
  if (agent_) agent_->start();  // everything an earlier start learned is forgotten, the agent's stream too
  started_ = true;
}

void BarrierController::run_lcm() {
  lcm_ = lcm_barrier(batch_ms_, LcmOptions{options_.max_step_spread, options_.max_local_steps, options_.lcm_objective, comm_ms_});
  double anchor_ms = lcm_.barrier_ms;
  const double slowest = *std::max_element(batch_ms_.begin(), batch_ms_.end());
  if ((options_.lcm_cap_steps > 0 || options_.lcm_cap_x_comm > 0) && anchor_ms >= options_.lcm_cap_above_steps * slowest) {
    // Never below the slowest worker's step: below it that worker would take no step at all.
    const double cap_ms = std::max({options_.lcm_cap_steps * slowest, options_.lcm_cap_x_comm * comm_ms_, slowest});
    anchor_ms = std::min(anchor_ms, cap_ms);
  }
  barrier_ms_ = options_.lcm_multiple * anchor_ms;
}

void BarrierController::update_local_steps() {
  // Orchestra 3.1.3: tau_n = T* / t_b^n, floored (whole steps) and kept within [1, max_local_steps].
  local_steps_.resize(batch_ms_.size());
  for (std::size_t n = 0; n < batch_ms_.size(); ++n)
    local_steps_[n] = std::clamp(steps_within(barrier_ms_, batch_ms_[n]), 1, options_.max_local_steps);
}

env::RoundPlan BarrierController::plan(const env::PlanContext& context) {
  require_started("plan()");
  // 3.1.3: "The agent will try to adjust this value at the beginning of each epoch" (or of each
  // window of K rounds).
  if (agent_ && !holding_ && decision_point(context)) move_barrier(agent_->act(observation()));

  env::RoundPlan plan;
  plan.aggregation = env::Aggregation::ModelAverage;
  plan.weighting = options_.weighting;  // Eq. 2: 1/N
  plan.workers.resize(batch_ms_.size());
  for (std::size_t n = 0; n < batch_ms_.size(); ++n) plan.workers[n] = {batch_sizes_[n], local_steps_[n]};
  if (options_.partition == DataPartition::Speed) plan.data_shares = shares_;
  plan.barrier_ms = barrier_ms_;
  return plan;
}

void BarrierController::move_barrier(int action) {
  if (action < -options_.max_move || action > options_.max_move)
    throw std::invalid_argument("orchestra barrier controller: action must be " + allowed_moves(options_.max_move) + ", got " +
                                std::to_string(action));
  require_started("move_barrier()");
  moved_ = true;
  last_action_ = action;
  const double moved = options_.move == BarrierMove::Multiplicative ? barrier_ms_ * std::pow(options_.move_factor, action)
                                                                     : barrier_ms_ + action * unit_ms_;
  barrier_ms_ = std::clamp(moved, min_barrier_ms_, max_barrier_ms_);
  update_local_steps();
}

void BarrierController::place_barrier(double barrier_ms) {
  require_started("place_barrier()");
  if (!(std::isfinite(barrier_ms) && barrier_ms > 0))
    throw std::invalid_argument("orchestra barrier controller: place_barrier(): expected a T > 0 ms, got " + std::to_string(barrier_ms));
  barrier_ms_ = std::clamp(barrier_ms, min_barrier_ms_, max_barrier_ms_);
  update_local_steps();
}

bool BarrierController::decision_point(const env::PlanContext& context) const {
  if (context.epoch_start) return true;
  if (options_.whole_cluster_windows && last_round_partial_) return false;
  return options_.interval == DecisionInterval::Rounds && context.round % options_.interval_rounds == 0;
}

bool BarrierController::closes_window(const env::RoundReport& report) const {
  if (report.epoch_end) return true;
  if (options_.whole_cluster_windows && !whole_cluster_round(report)) return false;
  return options_.interval == DecisionInterval::Rounds && (report.round + 1) % options_.interval_rounds == 0;
}

void BarrierController::close_window() {
  if (window_.rounds == 0) return;
  previous_window_ = std::move(last_window_);
  last_window_ = std::move(window_);
  window_ = DecisionWindow{};
  if (!std::isfinite(first_loss_)) first_loss_ = last_window_->train_loss();
  if (options_.interval == DecisionInterval::Rounds) {
    // The window's measurements replace the estimates now rather than at the epoch's end.
    window_times_.apply(batch_ms_);
    if (window_rounds_ > 0) comm_ms_ = window_comm_ms_ / static_cast<double>(window_rounds_);
    update_local_steps();
  }
  window_times_.reset(batch_ms_.size());
  window_comm_ms_ = 0;
  window_rounds_ = 0;
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
      for (StepTimes* times : {&epoch_times_, &window_times_}) {
        times->compute_ms[n] += w.compute_ms;
        times->steps[n] += w.local_steps;
      }
    }
    epoch_samples_ += w.samples;
  }
  // C is the all-reduce of a round of the whole cluster. A round some workers sat out (their
  // epoch's shard used up while capped faster workers still hold data) averages among the rest,
  // often within one server: its comm_ms (100 ms where the cluster's is 4.8 s, issue 41's
  // h100_k40_2g) says nothing about what a longer T costs, and taken for C it showed the state a
  // cheap network at the end of every epoch.
  const bool whole_cluster = whole_cluster_round(report);
  last_round_partial_ = !whole_cluster;
  if (whole_cluster && std::isfinite(report.comm_ms)) {
    window_comm_ms_ += report.comm_ms;
    ++window_rounds_;
    epoch_comm_ms_ += report.comm_ms;
    ++epoch_rounds_;
  }
  if (whole_cluster || !options_.whole_cluster_windows) window_.add(report);
  extend_stretch(report);
  if (closes_window(report)) close_window();
}

void BarrierController::extend_stretch(const env::RoundReport& report) {
  if (std::isfinite(report.round_ms)) clock_ms_ += report.round_ms;
  // barrier_ms_ is the T this round ran at: it only changes in plan() (a move), in observe_epoch()
  // (the heuristic) and in place_barrier(), never between a plan and its report.
  if (!stretch_ || stretch_->barrier_ms != barrier_ms_) {
    ProgressStretch next;
    next.barrier_ms = barrier_ms_;
    if (stretch_)
      if (const auto point = stretch_->last_point()) next.anchor(point->first, point->second);
    previous_stretch_ = std::move(stretch_);
    stretch_ = next;
  }
  stretch_->add(clock_ms_, report.train_loss);
}

void BarrierController::observe_evaluation(const env::EvalResult& result) {
  require_started("observe_evaluation()");
  if (options_.hold_at_accuracy > 0 && result.accuracy >= options_.hold_at_accuracy) holding_ = true;
}

void BarrierController::observe_epoch(const env::EpochReport& report) {
  require_started("observe_epoch()");
  close_window();  // a report without epoch_end (a caller that skipped it) still closes here
  // t_b^n = measured compute / steps over the epoch's full-batch rounds.
  epoch_times_.apply(batch_ms_);
  // 3.1.2: shares from this epoch's speeds (batches per second from the performance monitor).
  partition_->update(report);
  shares_ = partition_->shares();
  if (epoch_rounds_ > 0 && options_.interval == DecisionInterval::Epoch) comm_ms_ = epoch_comm_ms_ / static_cast<double>(epoch_rounds_);
  // 3.1.1: the batch numbers follow the current performance into the next epoch.
  if (lcm_owns_barrier()) run_lcm();
  update_local_steps();

  accuracy_before_last_ = last_accuracy_;
  last_accuracy_ = report.accuracy;
  epoch_times_.reset(batch_ms_.size());
  epoch_samples_ = 0;
  epoch_comm_ms_ = 0;
  epoch_rounds_ = 0;
  ++epochs_done_;
}

std::vector<float> BarrierController::observation() const {
  require_started("observation()");
  StateInputs inputs;
  inputs.window = last_window_ ? &*last_window_ : nullptr;
  inputs.previous = previous_window_ ? &*previous_window_ : nullptr;
  inputs.first_loss = first_loss_;
  if (options_.horizon_epochs > 0) {
    const double in_epoch = train_samples_ > 0 ? static_cast<double>(epoch_samples_) / static_cast<double>(train_samples_) : 0.0;
    inputs.budget_used = (epochs_done_ + std::min(1.0, in_epoch)) / options_.horizon_epochs;
  }
  inputs.accuracy = last_accuracy_;
  inputs.previous_accuracy = accuracy_before_last_;
  inputs.barrier_ms = barrier_ms_;
  inputs.start_barrier_ms = start_barrier_ms_;
  inputs.min_barrier_ms = min_barrier_ms_;
  inputs.max_barrier_ms = max_barrier_ms_;
  inputs.comm_ms = comm_ms_;
  inputs.batch_ms = batch_ms_;
  inputs.start_batch_ms = start_batch_ms_;
  inputs.local_steps = local_steps_;
  inputs.max_local_steps = options_.max_local_steps;
  inputs.last_action = last_action_;
  inputs.max_move = options_.max_move;
  inputs.stretch = stretch_ ? &*stretch_ : nullptr;
  inputs.previous_stretch = previous_stretch_ ? &*previous_stretch_ : nullptr;
  return build_state(inputs, options_.state_features);
}

}  // namespace orchestra
