#include "env/baselines/adaptive_period.hpp"

#include <algorithm>
#include <cmath>

#include "env/baselines/baselines.hpp"

namespace env {
namespace {

constexpr int kMaxPeriod = 1 << 20;

void set_period(RoundPlan& plan, int period) {
  for (auto& w : plan.workers) w.local_steps = period;
}

}  // namespace

void AdaCommPolicy::start(const ClusterView& cluster) {
  period_ = options_.initial_period;
  plan_ = averaging_plan(cluster, options_.batch, period_);
  first_loss_ = 0;
  interval_end_ms_ = options_.interval_s * 1000.0;
  loss_sum_ = 0;
  loss_count_ = 0;
}

RoundPlan AdaCommPolicy::plan(const PlanContext&) {
  set_period(plan_, period_);
  return plan_;
}

void AdaCommPolicy::observe_round(const RoundReport& report) {
  if (std::isfinite(report.train_loss)) {
    loss_sum_ += report.train_loss;
    ++loss_count_;
  }
  if (report.clock_ms < interval_end_ms_ || loss_count_ == 0) return;
  const double loss = loss_sum_ / loss_count_;
  if (first_loss_ <= 0) {
    first_loss_ = loss;  // F(x_0): the first interval keeps tau_0
  } else {
    const double tau = std::ceil(std::sqrt(loss / first_loss_) * options_.initial_period);
    period_ = static_cast<int>(std::clamp(tau, 1.0, static_cast<double>(kMaxPeriod)));
  }
  while (interval_end_ms_ <= report.clock_ms) interval_end_ms_ += options_.interval_s * 1000.0;
  loss_sum_ = 0;
  loss_count_ = 0;
}

int QsrPolicy::period_for(int base_period, double alpha, double lr) {
  if (!(lr > 0)) return kMaxPeriod;  // the schedule reached 0: never average again within reason
  const double quadratic = std::floor((alpha / lr) * (alpha / lr));
  return static_cast<int>(std::clamp(std::max(static_cast<double>(base_period), quadratic), 1.0, static_cast<double>(kMaxPeriod)));
}

void QsrPolicy::start(const ClusterView& cluster) { plan_ = averaging_plan(cluster, options_.batch, options_.base_period); }

RoundPlan QsrPolicy::plan(const PlanContext& context) {
  if (context.epoch_start && options_.learning_rate)
    set_period(plan_, period_for(options_.base_period, options_.alpha, options_.learning_rate(context.epoch)));
  return plan_;
}

}  // namespace env
