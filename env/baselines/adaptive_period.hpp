// Local SGD whose period H changes during training.
//
// AdaComm (Wang & Joshi, "Adaptive Communication Strategies to Achieve the Best Error-Runtime
// Trade-off in Local-Update SGD", SysML 2019, Sec. 4): start with a long period tau_0 while the
// loss is high, and shorten it as the loss falls: every `interval_s` of the run's clock,
//   tau_l = ceil( sqrt( F(x_l) / F(x_0) ) * tau_0 ),
// with F the training loss (here the mean over the interval just ended, and F(x_0) that of the
// first interval). Needs the training loss, so not for timing-only runs.
//
// QSR (Gu et al., "A Quadratic Synchronization Rule for Distributed Deep Learning", ICLR 2024):
// the period grows as the learning rate decays, H = max(H_base, floor((alpha / lr)^2)), set at
// each epoch from the config's schedule. Under a constant learning rate it is Local SGD with a
// fixed H; it only differs when the rate decays (training.lr_schedule: cosine).
#pragma once

#include <functional>

#include "env/barrier_policy.hpp"

namespace env {

struct AdaCommOptions {
  int batch = 0;            // local batch per worker; 0 = B/N
  int initial_period = 16;  // tau_0 (H0)
  double interval_s = 10;   // how often tau is re-evaluated, in the run's clock
};

class AdaCommPolicy : public BarrierPolicy {
 public:
  explicit AdaCommPolicy(AdaCommOptions options) : options_(options) {}
  void start(const ClusterView& cluster) override;
  RoundPlan plan(const PlanContext& context) override;
  void observe_round(const RoundReport& report) override;
  int period() const { return period_; }

 private:
  AdaCommOptions options_;
  RoundPlan plan_;
  int period_ = 1;
  double first_loss_ = 0;         // F(x_0); 0 until the first interval has ended
  double interval_end_ms_ = 0;
  double loss_sum_ = 0;
  int loss_count_ = 0;
};

struct QsrOptions {
  int batch = 0;       // local batch per worker; 0 = B/N
  int base_period = 4;  // H_base
  double alpha = 0.1;   // the growth coefficient: H = (alpha / lr)^2 once that exceeds H_base
  std::function<double(int epoch)> learning_rate;  // the schedule's rate at the start of an epoch
};

class QsrPolicy : public BarrierPolicy {
 public:
  explicit QsrPolicy(QsrOptions options) : options_(std::move(options)) {}
  void start(const ClusterView& cluster) override;
  RoundPlan plan(const PlanContext& context) override;
  // H for learning rate `lr`: max(H_base, floor((alpha / lr)^2)), capped at 2^20 steps.
  static int period_for(int base_period, double alpha, double lr);

 private:
  QsrOptions options_;
  RoundPlan plan_;
};

}  // namespace env
