// The state's progress entries (StateFeatures::Progress, issue 41 item 4): the loss's fall per ms
// fitted over the rounds at one T, compared with the T before it.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "orchestra/barrier_controller.hpp"
#include "orchestra/progress_stretch.hpp"
#include "orchestra/rl_state.hpp"
#include "orchestra/state_fixture.hpp"

using orchestra::ProgressStretch;
using orchestra::StateFeatures;
using orchestra::StateInputs;
using L = orchestra::StateLayout;
using testing::at;
using testing::two_workers;

namespace {

// rounds of an exponentially falling loss, L(t) = 2 exp(-rate t), ending at `from_ms` + k * `round_ms`
ProgressStretch stretch(double barrier_ms, double rate, double from_ms, double round_ms, int rounds) {
  ProgressStretch s;
  s.barrier_ms = barrier_ms;
  for (int k = 1; k <= rounds; ++k) {
    const double t = from_ms + k * round_ms;
    s.add(t, 2.0 * std::exp(-rate * t));
  }
  return s;
}

}  // namespace

TEST_CASE("progress stretch: the fitted rate is the loss's fall per ms, from two points on, noise averaged") {
  CHECK_FALSE(ProgressStretch{}.rate_per_ms());
  const ProgressStretch one = stretch(40, 1e-3, 0, 100, 1);
  CHECK(one.rounds == 1);
  CHECK_FALSE(one.rate_per_ms());  // one point: no slope
  ProgressStretch anchored;
  anchored.anchor(100, 2.0 * std::exp(-0.1));
  anchored.add(300, 2.0 * std::exp(-0.3));
  CHECK(anchored.rounds == 1);  // the anchor is not a round
  REQUIRE(anchored.rate_per_ms());
  CHECK(*anchored.rate_per_ms() == doctest::Approx(1e-3));
  CHECK(*stretch(40, 1e-3, 5000, 100, 8).rate_per_ms() == doctest::Approx(1e-3));
  // Alternating noise of +-20% on every round: the fit over 40 rounds stays near the rate, the
  // two-point difference of the last two rounds does not.
  ProgressStretch noisy;
  for (int k = 1; k <= 40; ++k) noisy.add(k * 100.0, 2.0 * std::exp(-1e-3 * k * 100.0) * (k % 2 ? 1.2 : 0.8));
  CHECK(*noisy.rate_per_ms() == doctest::Approx(1e-3).epsilon(0.1));
  CHECK(std::abs(std::log(1.2 / 0.8) / 100.0) > 3e-3);  // what one pair of rounds would read
  // Rounds without a loss (timing-only runs) count, and are not fitted.
  ProgressStretch timing;
  timing.add(100, std::nan(""));
  timing.add(200, 0.0);
  CHECK(timing.rounds == 2);
  CHECK_FALSE(timing.rate_per_ms());
  CHECK_FALSE(timing.last_point());
}

TEST_CASE("progress state: the base entries, then the fall at this T against the T before, the change of T, the rounds at T") {
  const ProgressStretch before = stretch(20, 1e-3, 0, 100, 5);
  const ProgressStretch now = stretch(40, 2e-3, 500, 100, 3);
  StateInputs in = two_workers();
  in.stretch = &now;
  in.previous_stretch = &before;
  const auto base = orchestra::build_state(in, StateFeatures::Base);
  const auto s = orchestra::build_state(in, StateFeatures::Progress);
  REQUIRE(base.size() == 22);
  REQUIRE(s.size() == 25);
  CHECK(orchestra::state_size(StateFeatures::Progress) == 25);
  for (int i = 0; i < L::kStateSize; ++i) CHECK(at(s, i) == at(base, i));
  CHECK(at(s, L::kProgressVsPreviousBarrier) == doctest::Approx(1.0 / 3));  // (2 - 1) / (2 + 1)
  CHECK(at(s, L::kLastBarrierChange) == doctest::Approx(1.0 / 6));          // doubled
  CHECK(at(s, L::kRoundsAtBarrier) == doctest::Approx(2.0 / 6));            // log2(1 + 3) / 6
  // A loss that rose at the current T and fell before reads -1; halving T reads -1/6.
  const ProgressStretch rising = stretch(10, -1e-3, 500, 100, 3);
  in.stretch = &rising;
  const auto down = orchestra::build_state(in, StateFeatures::Progress);
  CHECK(at(down, L::kProgressVsPreviousBarrier) == doctest::Approx(-1.0));
  CHECK(at(down, L::kLastBarrierChange) == doctest::Approx(-1.0 / 6));
  // Scale-free: ten times the times read the same.
  const ProgressStretch slow_before = stretch(200, 1e-4, 0, 1000, 5), slow_now = stretch(400, 2e-4, 5000, 1000, 3);
  in.stretch = &slow_now;
  in.previous_stretch = &slow_before;
  CHECK(at(orchestra::build_state(in, StateFeatures::Progress), L::kProgressVsPreviousBarrier) == doctest::Approx(1.0 / 3));
  // No stretch before this one: nothing to compare with.
  in.stretch = &now;
  in.previous_stretch = nullptr;
  const auto first = orchestra::build_state(in, StateFeatures::Progress);
  CHECK(at(first, L::kProgressVsPreviousBarrier) == 0);
  CHECK(at(first, L::kLastBarrierChange) == 0);
  CHECK(at(first, L::kRoundsAtBarrier) == doctest::Approx(2.0 / 6));
  // The names a config and a policy file use.
  for (const StateFeatures f : orchestra::kStateFeatures) CHECK(orchestra::state_features_from_name(orchestra::state_features_name(f)) == f);
  CHECK_FALSE(orchestra::state_features_from_name("progres"));
  const orchestra::StateBounds b = orchestra::state_bounds(StateFeatures::Progress);
  REQUIRE(b.low.size() == 25);
  CHECK(b.low[L::kProgressVsPreviousBarrier] == -1.0f);
  CHECK(b.low[L::kLastBarrierChange] == -1.0f);
  CHECK(b.low[L::kRoundsAtBarrier] == 0.0f);
}

TEST_CASE("barrier controller: a move of T starts a new stretch anchored at the last round before it") {
  orchestra::BarrierControllerOptions options = orchestra::BarrierControllerOptions::fixed_t(40);
  options.state_features = StateFeatures::Progress;
  options.move = orchestra::BarrierMove::Multiplicative;
  orchestra::BarrierController c(options);
  env::ClusterView view;
  view.num_workers = 2;
  view.global_batch = 64;
  view.train_samples = 6400;
  view.worker_names = {"a", "b"};
  view.max_batch = {64, 64};
  view.server_of = {0, 1};
  view.num_servers = 2;
  view.probe_step_ms = [](int worker, int) { return worker == 0 ? 10.0 : 20.0; };
  view.allreduce_ms = [](int) { return 10.0; };
  c.start(view);
  REQUIRE(c.observation().size() == 25);
  double log_loss = std::log(2.0);
  std::int64_t index = 0;
  // Rounds of 50 ms in which ln(loss) falls by `rate` per ms.
  const auto run = [&](int rounds, double rate) {
    for (int k = 0; k < rounds; ++k) {
      env::RoundReport r;
      r.round = index++;
      r.workers.resize(2);
      r.workers[0] = {32, c.local_steps()[0], 32 * c.local_steps()[0], 40, 0};
      r.workers[1] = {32, c.local_steps()[1], 32 * c.local_steps()[1], 40, 0};
      r.comm_ms = 10;
      r.round_ms = 50;
      log_loss -= rate * 50;
      r.train_loss = std::exp(log_loss);
      c.observe_round(r);
    }
  };
  run(4, 1e-3);
  auto s = c.observation();
  CHECK(at(s, L::kRoundsAtBarrier) == doctest::Approx(std::log2(5.0) / 6));
  CHECK(at(s, L::kLastBarrierChange) == 0);
  CHECK(at(s, L::kProgressVsPreviousBarrier) == 0);  // no T before this one
  c.move_barrier(+1);  // T = 80 ms
  run(1, 3e-3);        // one round, fitted from the last round at 40 ms: three times the fall per ms
  s = c.observation();
  CHECK(at(s, L::kLastBarrierChange) == doctest::Approx(1.0 / 6));
  CHECK(at(s, L::kRoundsAtBarrier) == doctest::Approx(1.0 / 6));
  CHECK(at(s, L::kProgressVsPreviousBarrier) == doctest::Approx(0.5));  // (3 - 1) / (3 + 1)
  run(3, 3e-3);
  CHECK(at(c.observation(), L::kProgressVsPreviousBarrier) == doctest::Approx(0.5));
  c.move_barrier(0);  // no change of T: the stretch goes on
  run(1, 3e-3);
  CHECK(at(c.observation(), L::kRoundsAtBarrier) == doctest::Approx(std::log2(6.0) / 6));
  c.move_barrier(-1);  // back to 40 ms, where the loss now falls at the same rate: 0, halved
  run(2, 3e-3);
  s = c.observation();
  CHECK(at(s, L::kLastBarrierChange) == doctest::Approx(-1.0 / 6));
  CHECK(at(s, L::kProgressVsPreviousBarrier) == doctest::Approx(0.0).epsilon(1e-6));
  // A new episode forgets the stretches.
  c.start(view);
  CHECK(at(c.observation(), L::kRoundsAtBarrier) == 0);
  // The base layout is unchanged by the tracking.
  orchestra::BarrierController base(orchestra::BarrierControllerOptions::fixed_t(40));
  base.start(view);
  CHECK(base.observation().size() == 22);
}

TEST_CASE("lead state: the latest loss against the T before's fitted trend at the same time") {
  // Before: ln L falls 1e-3 per ms over rounds ending at 100 ... 500 ms.
  const ProgressStretch before = stretch(20, 1e-3, 0, 100, 5);
  REQUIRE(before.log_loss_at(900));
  CHECK(*before.log_loss_at(900) == doctest::Approx(std::log(2.0) - 0.9));  // the line extrapolated
  CHECK_FALSE(ProgressStretch{}.log_loss_at(0));
  // Now: the loss at 900 ms is half of where the old trend would be: one doubling ahead, -1.
  ProgressStretch ahead;
  ahead.barrier_ms = 40;
  ahead.add(900, 2.0 * std::exp(-0.9) / 2);
  StateInputs in = two_workers();
  in.stretch = &ahead;
  in.previous_stretch = &before;
  auto s = orchestra::build_state(in, StateFeatures::Lead);
  REQUIRE(s.size() == 25);
  CHECK(at(s, L::kLossVsPreviousTrend) == doctest::Approx(-1.0));
  CHECK(at(s, L::kLastBarrierChange) == doctest::Approx(1.0 / 6));
  CHECK(at(s, L::kRoundsAtBarrier) == doctest::Approx(1.0 / 6));
  // On the trend: 0; a fifth above it: log2(1.2).
  ProgressStretch on_trend;
  on_trend.barrier_ms = 40;
  on_trend.add(900, 2.0 * std::exp(-0.9) * 1.2);
  in.stretch = &on_trend;
  s = orchestra::build_state(in, StateFeatures::Lead);
  CHECK(at(s, L::kLossVsPreviousTrend) == doctest::Approx(std::log2(1.2)));
  CHECK(orchestra::state_features_from_name("lead") == StateFeatures::Lead);
  CHECK(orchestra::state_bounds(StateFeatures::Lead).low[L::kLossVsPreviousTrend] == -1.0f);
}
