// AdaComm's and QSR's periods, worked out by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "env/baselines/adaptive_period.hpp"

namespace {

env::ClusterView two_workers() {
  env::ClusterView v;
  v.num_workers = 2;
  v.global_batch = 64;
  v.worker_names = {"a", "b"};
  v.max_batch = {64, 64};
  v.server_of = {0, 0};
  return v;
}

env::RoundReport round_at(double clock_s, double loss) {
  env::RoundReport r;
  r.clock_ms = clock_s * 1000;
  r.train_loss = loss;
  return r;
}

int steps_of(env::BarrierPolicy& policy) {
  const env::RoundPlan plan = policy.plan({});
  CHECK(plan.workers[0].local_steps == plan.workers[1].local_steps);
  return plan.workers[0].local_steps;
}

}  // namespace

TEST_CASE("adacomm: tau = ceil(sqrt(F_l / F_0) * tau_0), re-evaluated every interval, F_0 from the first interval") {
  env::AdaCommPolicy policy({0, 16, 10.0});
  policy.start(two_workers());
  CHECK(steps_of(policy) == 16);
  CHECK(policy.plan({}).workers[0].batch_size == 32);  // B/N
  policy.observe_round(round_at(4, 2.0));
  policy.observe_round(round_at(8, 2.0));
  CHECK(steps_of(policy) == 16);
  policy.observe_round(round_at(12, 2.0));  // the first interval ends: F_0 = 2, tau stays tau_0
  CHECK(steps_of(policy) == 16);
  policy.observe_round(round_at(16, 0.5));
  policy.observe_round(round_at(22, 0.5));  // F = 0.5: ceil(sqrt(0.25) * 16) = 8
  CHECK(steps_of(policy) == 8);
  policy.observe_round(round_at(31, 0.125));  // ceil(sqrt(0.0625) * 16) = 4
  CHECK(steps_of(policy) == 4);
  policy.observe_round(round_at(55, 0.02));  // a long round crosses two boundaries: ceil(1.6) = 2
  CHECK(steps_of(policy) == 2);
  policy.observe_round(round_at(58, 0.02));  // inside the interval that ends at 60 s: unchanged
  CHECK(steps_of(policy) == 2);
  policy.observe_round(round_at(61, std::nan("")));  // timing-only rounds carry no loss: no update
  CHECK(steps_of(policy) == 2);
}

TEST_CASE("qsr: H = max(H_base, floor((alpha / lr)^2)), set at each epoch from the schedule") {
  CHECK(env::QsrPolicy::period_for(4, 0.1, 0.05) == 4);    // (0.1 / 0.05)^2 = 4
  CHECK(env::QsrPolicy::period_for(4, 0.1, 0.1) == 4);     // 1 < H_base
  CHECK(env::QsrPolicy::period_for(4, 0.1, 0.02) == 25);   // 5^2
  CHECK(env::QsrPolicy::period_for(4, 0.1, 0.03) == 11);   // floor(11.1)
  CHECK(env::QsrPolicy::period_for(4, 0.1, 0.0) == 1 << 20);
  env::QsrOptions o;
  o.base_period = 4;
  o.alpha = 0.1;
  o.learning_rate = [](int epoch) { return epoch == 0 ? 0.05 : 0.01; };
  env::QsrPolicy policy(o);
  policy.start(two_workers());
  env::PlanContext first;
  first.epoch_start = true;
  CHECK(policy.plan(first).workers[0].local_steps == 4);
  CHECK(policy.plan({}).workers[1].local_steps == 4);  // within the epoch: unchanged
  env::PlanContext second;
  second.epoch = 1;
  second.epoch_start = true;
  CHECK(policy.plan(second).workers[0].local_steps == 100);
}
