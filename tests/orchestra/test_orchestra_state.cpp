#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "orchestra/rl_state.hpp"
#include "orchestra/state_fixture.hpp"

using orchestra::DecisionWindow;
using orchestra::StateInputs;
using L = orchestra::StateLayout;
using testing::at;
using testing::two_workers;

namespace {

env::RoundReport round(std::int64_t index, double busy0, double busy1, double comm, double loss) {
  env::RoundReport r;
  r.round = index;
  r.workers.resize(2);
  r.workers[0] = {32, 4, 128, busy0, 0};
  r.workers[1] = {32, 2, 64, busy1, busy0 - busy1};
  r.comm_ms = comm;
  r.round_ms = busy0 + comm;
  r.train_loss = loss;
  return r;
}

}  // namespace

TEST_CASE("state layout: 22 scale-free entries") { CHECK(L::kStateSize == 22); }

TEST_CASE("decision window: sums a window's rounds, the loss weighted by steps") {
  DecisionWindow w;
  w.add(round(7, 40, 30, 160, 2.0));
  w.add(round(8, 40, 20, 160, 1.0));
  CHECK(w.rounds == 2);
  CHECK(w.global_rounds == 9);
  CHECK(w.elapsed_ms == doctest::Approx(400));
  CHECK(w.comm_ms == doctest::Approx(320));
  CHECK(w.busy_ms[0] == doctest::Approx(80));
  CHECK(w.idle_ms[1] == doctest::Approx(30));
  CHECK(w.steps[0] == 8);
  CHECK(w.samples == 384);
  CHECK(w.train_loss() == doctest::Approx(1.5));  // 6 steps at 2.0, 6 at 1.0
  CHECK(std::isnan(DecisionWindow{}.train_loss()));
}

TEST_CASE("state after two windows: progress, loss and its trend, waiting, and T against the cluster's times") {
  DecisionWindow previous, window;
  previous.add(round(0, 40, 20, 160, 2.0));
  window.add(round(1, 40, 20, 160, 1.0));
  StateInputs in = two_workers();
  in.window = &window;
  in.previous = &previous;
  in.first_loss = 2.0;
  in.budget_used = 0.25;
  in.accuracy = 0.7;
  in.previous_accuracy = 0.6;
  in.last_action = 1;
  in.batch_ms = {10, 40};  // the T4 has slowed to half its speed
  in.local_steps = {4, 1};

  const auto s = orchestra::build_state(in);
  REQUIRE(s.size() == 22);
  CHECK(at(s, L::kBudgetUsed) == doctest::Approx(0.25));
  CHECK(at(s, L::kGlobalSyncIndex) == doctest::Approx(std::log(3.0) / std::log(1001.0)));
  CHECK(at(s, L::kLocalStepsMean) == doctest::Approx(2.5 / 64));
  CHECK(at(s, L::kLocalStepsSpread) == doctest::Approx(3.0 / 64));
  CHECK(at(s, L::kSyncRate) == doctest::Approx(1.0 / 4));  // one round for 4 steps of the fastest
  CHECK(at(s, L::kAccuracy) == doctest::Approx(0.7));
  CHECK(at(s, L::kAccuracyChange) == doctest::Approx(0.1));
  CHECK(at(s, L::kTrainLoss) == doctest::Approx(0.25));  // 1.0 / 2.0, halved
  CHECK(at(s, L::kLossTrend) == doctest::Approx(-1.0));  // halved: log2(1/2)
  CHECK(at(s, L::kWaitingMean) == doctest::Approx(20.0 / 80.0));
  CHECK(at(s, L::kWaitingMax) == doctest::Approx(0.5));
  CHECK(at(s, L::kCommShareAtBarrier) == doctest::Approx(160.0 / 200.0));
  CHECK(at(s, L::kCommShareWindow) == doctest::Approx(160.0 / 200.0));
  CHECK(at(s, L::kBarrierVsSlowest) == doctest::Approx(0.0));             // T = the slowest step
  CHECK(at(s, L::kBarrierVsFastest) == doctest::Approx(2.0 / 6));         // two doublings
  CHECK(at(s, L::kBarrierVsComm) == doctest::Approx(-2.0 / 6));           // a quarter of C
  CHECK(at(s, L::kBarrierVsStart) == doctest::Approx(1.0 / 6));           // doubled since the start
  CHECK(at(s, L::kBarrierInBounds) == doctest::Approx(std::log(4.0) / std::log(64.0)));
  CHECK(at(s, L::kSpeedSpread) == doctest::Approx(0.25));
  CHECK(at(s, L::kSlowdown) == doctest::Approx(0.5));  // log2(40 / 20) / 2
  CHECK(at(s, L::kClusterSize) == doctest::Approx(1.0 / 6));
  CHECK(at(s, L::kLastAction) == 1);
  for (float v : s) {
    CHECK(v >= -1.0f);
    CHECK(v <= 1.0f);
  }
  // Moves of two sizes: the entry is the move over the largest one.
  in.max_move = 2;
  in.last_action = -1;
  CHECK(at(orchestra::build_state(in), L::kLastAction) == doctest::Approx(-0.5));
  in.last_action = 2;
  CHECK(at(orchestra::build_state(in), L::kLastAction) == 1);
}

TEST_CASE("state is scale-free: a cluster ten times slower with a ten times slower network reads the same") {
  DecisionWindow fast, slow;
  fast.add(round(0, 40, 20, 160, 2.0));
  slow.add(round(0, 400, 200, 1600, 2.0));
  StateInputs a = two_workers(), b = two_workers();
  a.window = &fast;
  b.window = &slow;
  for (StateInputs* in : {&a, &b}) in->first_loss = 2.0;
  for (double* t : {&b.barrier_ms, &b.start_barrier_ms, &b.min_barrier_ms, &b.max_barrier_ms, &b.comm_ms}) *t *= 10;
  for (auto& t : b.batch_ms) t *= 10;
  for (auto& t : b.start_batch_ms) t *= 10;
  const auto sa = orchestra::build_state(a), sb = orchestra::build_state(b);
  for (int i = 0; i < L::kStateSize; ++i) CHECK(at(sa, i) == doctest::Approx(at(sb, i)));
}

TEST_CASE("state before the first window: only the cluster, T and the plan are known") {
  const auto s = orchestra::build_state(two_workers());
  REQUIRE(s.size() == 22);
  for (int i : {L::kBudgetUsed, L::kGlobalSyncIndex, L::kSyncRate, L::kAccuracy, L::kAccuracyChange, L::kTrainLoss, L::kLossTrend,
                L::kWaitingMean, L::kWaitingMax, L::kCommShareWindow, L::kSlowdown, L::kLastAction})
    CHECK(at(s, i) == 0);
  CHECK(at(s, L::kCommShareAtBarrier) == doctest::Approx(0.8));
  CHECK(at(s, L::kBarrierVsStart) == doctest::Approx(1.0 / 6));
}

TEST_CASE("state: NaN losses (timing-only runs) and no communication read as 0 and T ahead of C") {
  DecisionWindow w;
  w.add(round(0, 40, 20, 0, std::nan("")));
  StateInputs in = two_workers();
  in.window = &w;
  in.comm_ms = 0;
  const auto s = orchestra::build_state(in);
  CHECK(at(s, L::kTrainLoss) == 0);
  CHECK(at(s, L::kLossTrend) == 0);
  CHECK(at(s, L::kCommShareAtBarrier) == 0);
  CHECK(at(s, L::kBarrierVsComm) == 1);
}

TEST_CASE("state rejects inputs that do not describe a cluster") {
  StateInputs in;
  CHECK_THROWS_WITH_AS(orchestra::build_state(in), doctest::Contains("no batch times"), std::invalid_argument);
  in = two_workers();
  in.local_steps = {1};
  CHECK_THROWS_WITH_AS(orchestra::build_state(in), doctest::Contains("expected 2 planned local steps, got 1"), std::invalid_argument);
  in = two_workers();
  in.start_batch_ms = {10};
  CHECK_THROWS_WITH_AS(orchestra::build_state(in), doctest::Contains("start batch times"), std::invalid_argument);
  in = two_workers();
  in.batch_ms[1] = 0;
  CHECK_THROWS_AS(orchestra::build_state(in), std::invalid_argument);
  in = two_workers();
  in.max_local_steps = 0;
  CHECK_THROWS_AS(orchestra::build_state(in), std::invalid_argument);
  in = two_workers();
  in.min_barrier_ms = 0;
  CHECK_THROWS_WITH_AS(orchestra::build_state(in), doctest::Contains("barrier times must be positive"), std::invalid_argument);
}

TEST_CASE("state bounds: every entry of states drawn over wide inputs lies inside them, and the signed ones go below 0") {
  const orchestra::StateBounds bounds = orchestra::state_bounds();
  REQUIRE(bounds.low.size() == static_cast<std::size_t>(L::kStateSize));
  REQUIRE(bounds.high.size() == static_cast<std::size_t>(L::kStateSize));
  std::mt19937_64 rng(43);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, std::uniform_real_distribution<double>(0, 1)(rng)); };
  std::vector<float> lowest(L::kStateSize, 1.0f);
  for (int draw = 0; draw < 2000; ++draw) {
    DecisionWindow previous, window;
    previous.add(round(0, log_uniform(1, 1e4), log_uniform(1, 1e4), log_uniform(1e-3, 1e5), log_uniform(1e-3, 1e2)));
    window.add(round(1, log_uniform(1, 1e4), log_uniform(1, 1e4), log_uniform(1e-3, 1e5), log_uniform(1e-3, 1e2)));
    StateInputs in = two_workers();
    in.window = &window;
    in.previous = &previous;
    in.first_loss = log_uniform(1e-3, 1e2);
    in.budget_used = std::uniform_real_distribution<double>(0, 1)(rng);
    in.accuracy = std::uniform_real_distribution<double>(0, 1)(rng);
    in.previous_accuracy = std::uniform_real_distribution<double>(0, 1)(rng);
    in.batch_ms = {log_uniform(0.1, 1e4), log_uniform(0.1, 1e4)};
    in.start_batch_ms = {log_uniform(0.1, 1e4), log_uniform(0.1, 1e4)};
    in.local_steps = {static_cast<int>(rng() % 65), static_cast<int>(rng() % 65)};
    in.min_barrier_ms = log_uniform(0.1, 10);
    in.max_barrier_ms = in.min_barrier_ms * log_uniform(1, 1e5);
    in.barrier_ms = log_uniform(in.min_barrier_ms, in.max_barrier_ms);
    in.start_barrier_ms = log_uniform(in.min_barrier_ms, in.max_barrier_ms);
    in.comm_ms = draw % 10 == 0 ? 0.0 : log_uniform(1e-3, 1e5);
    in.last_action = static_cast<int>(rng() % 3) - 1;
    const auto s = orchestra::build_state(in);
    for (int i = 0; i < L::kStateSize; ++i) {
      CAPTURE(i);
      CHECK(at(s, i) >= bounds.low[static_cast<std::size_t>(i)]);
      CHECK(at(s, i) <= bounds.high[static_cast<std::size_t>(i)]);
      lowest[static_cast<std::size_t>(i)] = std::min(lowest[static_cast<std::size_t>(i)], at(s, i));
    }
  }
  // The bounds are the state's, not looser: what is declared signed does go negative.
  for (int i = 0; i < L::kStateSize; ++i) {
    CAPTURE(i);
    CHECK((bounds.low[static_cast<std::size_t>(i)] < 0) == (lowest[static_cast<std::size_t>(i)] < 0));
  }
}
