#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "orchestra/barrier_controller.hpp"
#include "orchestra/data_partition.hpp"
#include "cluster_a_fixture.hpp"
#include "controller_fixture.hpp"

using orchestra::BarrierController;
using orchestra::BarrierControllerOptions;
using testing::ScriptedAgent;
using testing::at;
using testing::cluster_a;
using testing::feed_epoch;
using testing::model_ms;

namespace {

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

}  // namespace

TEST_CASE("data partition: shares proportional to speed, summing to 1") {
  const auto shares = orchestra::normalize_shares({2.1, 1, 1, 1});
  CHECK(shares[0] == doctest::Approx(2.1 / 5.1));
  CHECK(shares[1] == doctest::Approx(1 / 5.1));
  CHECK(sum(shares) == doctest::Approx(1));
  CHECK_THROWS_AS(orchestra::normalize_shares({}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(orchestra::normalize_shares({1, 0}), doctest::Contains("worker 1"), std::invalid_argument);
}

TEST_CASE("data partition: re-estimated from an epoch's steps / busy time") {
  orchestra::DataPartitionController partition({64, 64});
  CHECK(partition.shares() == std::vector<double>{0.5, 0.5});  // nothing measured yet
  partition.set_batch_times({10, 21});
  CHECK(partition.shares()[0] == doctest::Approx(21.0 / 31.0));

  env::EpochReport e;
  e.worker_steps = {300, 100};         // 100 and 50 batches per second
  e.worker_busy_ms = {3000, 2000};
  CHECK(partition.update(e) == 2);
  CHECK(partition.batches_per_second()[0] == doctest::Approx(100));
  CHECK(partition.batches_per_second()[1] == doctest::Approx(50));
  CHECK(partition.shares()[0] == doctest::Approx(2.0 / 3.0));
  CHECK(sum(partition.shares()) == doctest::Approx(1));
}

TEST_CASE("data partition: zero, NaN or missing measurements fall back to the previous speeds") {
  orchestra::DataPartitionController partition({64, 64});
  partition.set_batch_times({10, 20});
  const auto before = partition.shares();
  env::EpochReport e;
  e.worker_steps = {0, 100};
  e.worker_busy_ms = {0, std::nan("")};
  CHECK(partition.update(e) == 0);
  CHECK(partition.shares() == before);

  e.worker_steps = {100, 100};
  e.worker_busy_ms = {1000, 0};  // worker 1: no busy time, keeps 50 batches/s
  CHECK(partition.update(e) == 1);
  CHECK(partition.batches_per_second()[1] == doctest::Approx(50));
  CHECK(partition.shares()[0] == doctest::Approx(2.0 / 3.0));

  e.worker_steps = {100};  // a report for another cluster size says nothing
  CHECK(partition.update(e) == 0);
  CHECK_THROWS_AS(orchestra::DataPartitionController({64, 0}), std::invalid_argument);
}

TEST_CASE("data partition: unequal batch sizes split by samples per second") {
  // Same batches per second, twice the batch: twice the samples, twice the data.
  orchestra::DataPartitionController partition({128, 64});
  partition.set_batch_times({10, 10});
  CHECK(partition.shares()[0] == doctest::Approx(2.0 / 3.0));
}

TEST_CASE("orchestra-lcm on cluster A: probed times, T* = 21 ms, tau 2,1,1,1, shares by speed") {
  auto fake = cluster_a();
  BarrierController c(BarrierControllerOptions::orchestra_lcm());
  c.start(fake->view);
  CHECK(c.options().source == orchestra::BarrierSource::Lcm);
  CHECK(fake->probes == 4 * 5);
  CHECK(c.batch_sizes() == std::vector<int>{64, 64, 64, 64});
  CHECK(c.batch_times_ms() == std::vector<double>{model_ms(0, 64), model_ms(1, 64), model_ms(2, 64), model_ms(3, 64)});
  CHECK(c.batch_times_ms()[0] == doctest::Approx(10));
  CHECK(c.batch_times_ms()[3] == doctest::Approx(21));
  CHECK(c.barrier_ms() == doctest::Approx(21));
  CHECK(c.lcm().max_idle_ms == doctest::Approx(1));
  CHECK(c.action_unit_ms() == doctest::Approx(10));  // the fastest worker's batch time
  CHECK(c.local_steps() == std::vector<int>{2, 1, 1, 1});

  const env::RoundPlan plan = c.plan(at(0, 0, true));
  CHECK(plan.aggregation == env::Aggregation::ModelAverage);
  CHECK(plan.weighting == env::AverageWeighting::Uniform);
  REQUIRE(plan.workers.size() == 4);
  CHECK(plan.workers[0].batch_size == 64);
  CHECK(plan.workers[0].local_steps == 2);
  CHECK(plan.workers[1].local_steps == 1);
  CHECK(plan.barrier_ms == doctest::Approx(21));
  REQUIRE(plan.data_shares.size() == 4);
  // speeds 1/10 and 1/21 per ms: 0.1 / (0.1 + 3/21) = 0.4118, each T4 0.1961
  CHECK(plan.data_shares[0] == doctest::Approx(0.1 / (0.1 + 3.0 / 21.0)));
  CHECK(plan.data_shares[1] == doctest::Approx((1.0 / 21.0) / (0.1 + 3.0 / 21.0)));
  CHECK(sum(plan.data_shares) == doctest::Approx(1));
}

TEST_CASE("default batch: global_batch / N, capped by each worker's max_batch") {
  auto fake = cluster_a({32, 128, 128, 128});
  BarrierController c;
  c.start(fake->view);
  CHECK(c.batch_sizes() == std::vector<int>{32, 64, 64, 64});
  CHECK(fake->probed_batch == std::vector<int>{32, 64, 64, 64});
  CHECK(c.batch_times_ms()[0] == doctest::Approx(6));  // 2 + 0.125 * 32
}

TEST_CASE("move_barrier moves T by one unit, within [fastest t_b, max_local_steps * slowest t_b]") {
  auto fake = cluster_a();
  BarrierController c;
  c.start(fake->view);
  CHECK(c.lcm_owns_barrier());
  c.move_barrier(+1);
  CHECK(c.barrier_ms() == doctest::Approx(31));
  CHECK(c.local_steps() == std::vector<int>{3, 1, 1, 1});
  CHECK_FALSE(c.lcm_owns_barrier());
  c.move_barrier(0);
  CHECK(c.barrier_ms() == doctest::Approx(31));
  c.move_barrier(-1);
  CHECK(c.barrier_ms() == doctest::Approx(21));
  c.move_barrier(-1);
  c.move_barrier(-1);  // 11 -> 1 ms, kept at the fastest batch time
  CHECK(c.barrier_ms() == doctest::Approx(10));
  CHECK(c.local_steps() == std::vector<int>{1, 1, 1, 1});

  BarrierControllerOptions small_cap;
  small_cap.max_local_steps = 4;
  BarrierController capped(small_cap);
  capped.start(fake->view);
  for (int i = 0; i < 10; ++i) capped.move_barrier(+1);
  CHECK(capped.barrier_ms() == doctest::Approx(84));  // 4 steps of a T4; the 2080 Ti is capped at 4 earlier
  CHECK(capped.local_steps() == std::vector<int>{4, 4, 4, 4});
}

TEST_CASE("a multiplicative move scales T by the factor, within the bounds, relative ones included") {
  auto fake = cluster_a();
  BarrierControllerOptions options;
  options.move = orchestra::BarrierMove::Multiplicative;
  options.move_factor = 2;
  options.min_barrier_x_start = 0.5;  // T* = 21: no lower than 10.5 ms
  options.max_barrier_x_start = 4;    // nor higher than 84 ms
  BarrierController c(options);
  c.start(fake->view);
  CHECK(c.start_barrier_ms() == doctest::Approx(21));
  CHECK(c.min_barrier_ms() == doctest::Approx(10.5));
  CHECK(c.max_barrier_ms() == doctest::Approx(84));
  c.move_barrier(+1);
  CHECK(c.barrier_ms() == doctest::Approx(42));
  CHECK(c.local_steps() == std::vector<int>{4, 2, 2, 2});
  c.move_barrier(+1);
  c.move_barrier(+1);  // 168 ms, kept at 84
  CHECK(c.barrier_ms() == doctest::Approx(84));
  c.move_barrier(-1);
  CHECK(c.barrier_ms() == doctest::Approx(42));
  for (int i = 0; i < 3; ++i) c.move_barrier(-1);  // 21, 10.5, then kept
  CHECK(c.barrier_ms() == doctest::Approx(10.5));
  CHECK(c.local_steps() == std::vector<int>{1, 1, 1, 1});  // floored, never below 1

  CHECK_THROWS_AS(c.move_barrier(2), std::invalid_argument);  // moves of one size unless max_move says otherwise

  // max_move 2: moves of factor and factor^2 either way (x2 and x4), still within the bounds.
  options.max_move = 2;
  options.max_barrier_x_start = 16;
  BarrierController wide(options);
  wide.start(fake->view);
  wide.move_barrier(+2);
  CHECK(wide.barrier_ms() == doctest::Approx(84));
  wide.move_barrier(+1);
  CHECK(wide.barrier_ms() == doctest::Approx(168));
  wide.move_barrier(-2);
  CHECK(wide.barrier_ms() == doctest::Approx(42));
  wide.move_barrier(-2);  // 10.5: the lower bound
  CHECK(wide.barrier_ms() == doctest::Approx(10.5));
  CHECK_THROWS_WITH_AS(wide.move_barrier(3), doctest::Contains("action must be in [-2, +2]"), std::invalid_argument);
  for (const int bad : {0, 5}) {
    options.max_move = bad;
    CHECK_THROWS_WITH_AS(BarrierController{options}, doctest::Contains("max_move: expected an integer in [1, 4]"), std::invalid_argument);
  }

  // Absolute bounds and the defaults: [fastest, max_local_steps * slowest] = [10, 64 * 21].
  BarrierController plain(BarrierControllerOptions{});
  plain.start(fake->view);
  CHECK(plain.min_barrier_ms() == doctest::Approx(10));
  CHECK(plain.max_barrier_ms() == doctest::Approx(64 * 21));
  BarrierControllerOptions absolute;
  absolute.min_barrier_ms = 15;
  absolute.max_barrier_ms = 50;
  BarrierController bounded(absolute);
  bounded.start(fake->view);
  for (int i = 0; i < 5; ++i) bounded.move_barrier(+1);
  CHECK(bounded.barrier_ms() == doctest::Approx(50));
  for (int i = 0; i < 9; ++i) bounded.move_barrier(-1);
  CHECK(bounded.barrier_ms() == doctest::Approx(15));
}

TEST_CASE("interval: rounds asks the agent every K rounds and at every epoch's start, and re-estimates t_b per window") {
  auto fake = cluster_a();
  auto agent = std::make_shared<ScriptedAgent>();
  agent->action = 0;
  BarrierControllerOptions options;
  options.interval = orchestra::DecisionInterval::Rounds;
  options.interval_rounds = 3;
  BarrierController c(options);
  c.set_agent(agent);
  c.start(fake->view);
  const auto round_of = [&](std::int64_t index, double t4_ms, bool epoch_end) {
    env::RoundReport report;
    report.round = index;
    report.comm_ms = 5;
    report.epoch_end = epoch_end;
    report.train_loss = 1.0;
    for (std::size_t n = 0; n < 4; ++n) {
      env::WorkerRoundStats w;
      w.batch_size = c.batch_sizes()[n];
      w.local_steps = c.local_steps()[n];
      w.samples = w.local_steps * w.batch_size;
      w.compute_ms = w.local_steps * (n == 0 ? 10.0 : t4_ms);
      report.workers.push_back(w);
    }
    return report;
  };
  // Rounds 0-2 form the first window; the T4s slow to 42 ms in it.
  for (std::int64_t r = 0; r < 3; ++r) {
    CHECK(c.decision_point(at(r, 0, r == 0)) == (r == 0));
    c.plan(at(r, 0, r == 0));
    const auto report = round_of(r, 42, false);
    CHECK(c.closes_window(report) == (r == 2));
    c.observe_round(report);
  }
  CHECK(agent->calls == 1);
  // The window closed: t_b of the T4s is 42 ms now, not at the epoch's end, and tau follows.
  CHECK(c.batch_times_ms()[1] == doctest::Approx(42));
  CHECK(c.local_steps() == std::vector<int>{2, 1, 1, 1});  // T* = 21 stays (the agent owns T)
  c.plan(at(3, 0, false));  // round 3: a multiple of K, a decision
  CHECK(agent->calls == 2);
  CHECK(agent->last_observation[orchestra::StateLayout::kSlowdown] == doctest::Approx(0.5f));  // log2(42/21)/2
  // An epoch that ends after one more round closes that window too; the next epoch starts with a
  // decision, and so does round 6.
  const auto last = round_of(3, 42, true);
  CHECK(c.closes_window(last));
  c.observe_round(last);
  c.plan(at(4, 1, true));
  CHECK(agent->calls == 3);
  c.plan(at(5, 1, false));
  CHECK(agent->calls == 3);
  c.plan(at(6, 1, false));
  CHECK(agent->calls == 4);

  // interval: epoch (the paper's) asks at an epoch's first round only, whatever the round index.
  auto epoch_agent = std::make_shared<ScriptedAgent>();
  BarrierController per_epoch;
  per_epoch.set_agent(epoch_agent);
  per_epoch.start(fake->view);
  per_epoch.plan(at(0, 0, true));
  per_epoch.plan(at(3, 0, false));
  per_epoch.plan(at(6, 0, false));
  CHECK(epoch_agent->calls == 1);
}

TEST_CASE("an action outside {-1, 0, +1} is rejected with a clear message") {
  auto fake = cluster_a();
  BarrierController c;
  c.start(fake->view);
  CHECK_THROWS_WITH_AS(c.move_barrier(2),
                       "orchestra barrier controller: action must be -1, 0 or +1 (decrease, keep or increase T by "
                       "one unit), got 2",
                       std::invalid_argument);
  CHECK_THROWS_AS(c.move_barrier(-2), std::invalid_argument);
  CHECK(c.barrier_ms() == doctest::Approx(21));
  CHECK(c.lcm_owns_barrier());
}

TEST_CASE("orchestra-lcm follows measured times: the 2080 Ti slows to 20 ms, T* becomes 420 ms") {
  auto fake = cluster_a();
  BarrierController c;
  c.start(fake->view);
  c.plan(at(0, 0, true));
  feed_epoch(c, {20, 21, 21, 21}, 10, 0, 0);
  CHECK(c.batch_times_ms()[0] == doctest::Approx(20));
  // t_b = 20, 21: every candidate up to lcm = 420 keeps the spread <= 1, and 420 has no idle.
  CHECK(c.barrier_ms() == doctest::Approx(420));
  CHECK(c.local_steps() == std::vector<int>{21, 20, 20, 20});
  CHECK(c.data_shares()[0] == doctest::Approx(0.05 / (0.05 + 3.0 / 21.0)));
  const auto plan = c.plan(at(10, 1, true));
  CHECK(plan.barrier_ms == doctest::Approx(420));
  CHECK(plan.workers[0].local_steps == 21);
}

TEST_CASE("after a move the agent owns T: measured times change tau, not T") {
  auto fake = cluster_a();
  BarrierController c;
  c.start(fake->view);
  c.move_barrier(+1);  // 31 ms
  feed_epoch(c, {20, 21, 21, 21}, 10, 0, 0);
  CHECK(c.barrier_ms() == doctest::Approx(31));
  CHECK(c.local_steps() == std::vector<int>{1, 1, 1, 1});
}

TEST_CASE("rounds with a partial last batch and epochs without measurements do not move t_b") {
  auto fake = cluster_a();
  BarrierController c;
  c.start(fake->view);
  env::RoundReport partial;
  partial.round = 0;
  for (std::size_t n = 0; n < 4; ++n) {
    env::WorkerRoundStats w;
    w.batch_size = 64;
    w.local_steps = c.local_steps()[n];
    w.samples = w.local_steps * 64 - 60;  // the shard ended inside the last step
    w.compute_ms = 1.0;                   // would read as a very fast worker
    partial.workers.push_back(w);
  }
  c.observe_round(partial);
  env::EpochReport empty;  // no per-worker vectors: no speeds either
  empty.accuracy = 0.3;
  c.observe_epoch(empty);
  CHECK(c.batch_times_ms() == std::vector<double>{10, 21, 21, 21});
  CHECK(c.data_shares()[0] == doctest::Approx(0.1 / (0.1 + 3.0 / 21.0)));
  CHECK(c.barrier_ms() == doctest::Approx(21));

  env::RoundReport wrong;
  wrong.workers.resize(3);
  CHECK_THROWS_WITH_AS(c.observe_round(wrong), doctest::Contains("3 workers, expected 4"), std::invalid_argument);
}

TEST_CASE("fixed-t: T stays as given, tau and shares follow the measured times") {
  auto fake = cluster_a();
  BarrierController c(BarrierControllerOptions::fixed_t(50));
  c.start(fake->view);
  CHECK(c.options().source == orchestra::BarrierSource::Fixed);
  CHECK(c.barrier_ms() == doctest::Approx(50));
  CHECK(c.local_steps() == std::vector<int>{5, 2, 2, 2});
  feed_epoch(c, {20, 21, 21, 21}, 5, 0, 0);
  CHECK(c.barrier_ms() == doctest::Approx(50));
  CHECK(c.local_steps() == std::vector<int>{2, 2, 2, 2});

  BarrierController big(BarrierControllerOptions::fixed_t(10000));
  big.start(fake->view);
  CHECK(big.local_steps()[0] == 64);  // max_local_steps caps every tau
}

TEST_CASE("fixed-t with T_x_comm: T is that multiple of the all-reduce time C, at least the fastest step") {
  auto fake = cluster_a();  // C = 5 ms, batch times 10 / 21 / 21 / 21 ms
  BarrierController c(BarrierControllerOptions::fixed_t_x_comm(8));
  c.start(fake->view);
  CHECK(c.options().source == orchestra::BarrierSource::CommMultiple);
  CHECK(c.barrier_ms() == doctest::Approx(40));
  CHECK(c.local_steps() == std::vector<int>{4, 1, 1, 1});
  feed_epoch(c, {20, 21, 21, 21}, 5, 0, 0);
  CHECK(c.barrier_ms() == doctest::Approx(40));  // static: measured rounds change tau, not T
  CHECK(c.local_steps() == std::vector<int>{2, 1, 1, 1});

  BarrierController cheap(BarrierControllerOptions::fixed_t_x_comm(1));
  cheap.start(fake->view);
  CHECK(cheap.barrier_ms() == doctest::Approx(10));  // 5 ms is below the fastest step: every tau is 1 either way
  CHECK_THROWS_WITH_AS(BarrierController(BarrierControllerOptions::fixed_t_x_comm(0)), doctest::Contains("comm_multiple: expected a positive factor"),
                       std::invalid_argument);
}

TEST_CASE("partition: steps leaves the split to the environment (empty data_shares)") {
  auto fake = cluster_a();
  BarrierControllerOptions options;
  options.partition = orchestra::DataPartition::Steps;
  BarrierController c(options);
  c.start(fake->view);
  CHECK(c.plan(at(0, 0, true)).data_shares.empty());
}

TEST_CASE("an attached agent is asked once per epoch, at its first round, with the RL state") {
  auto fake = cluster_a();
  auto agent = std::make_shared<ScriptedAgent>();
  BarrierController c;
  c.set_agent(agent);
  c.start(fake->view);
  CHECK_FALSE(c.lcm_owns_barrier());
  auto plan = c.plan(at(0, 0, true));
  CHECK(agent->calls == 1);
  CHECK(agent->last_observation.size() == static_cast<std::size_t>(orchestra::StateLayout::kStateSize));
  CHECK(plan.barrier_ms == doctest::Approx(31));
  plan = c.plan(at(1, 0, false));
  CHECK(agent->calls == 1);
  CHECK(plan.barrier_ms == doctest::Approx(31));

  agent->action = 5;
  CHECK_THROWS_AS(c.plan(at(2, 1, true)), std::invalid_argument);
}

TEST_CASE("hold_at_accuracy: once an evaluation reaches it the agent is not asked again, start() forgets it") {
  auto fake = cluster_a();
  auto agent = std::make_shared<ScriptedAgent>();
  BarrierControllerOptions options;
  options.interval = orchestra::DecisionInterval::Rounds;  // asked every round
  options.hold_at_accuracy = 0.8;
  BarrierController c(options);
  c.set_agent(agent);
  c.start(fake->view);
  c.plan(at(0, 0, true));
  c.observe_evaluation({0.79, 1.0});  // under the target: still deciding
  c.plan(at(1, 0, false));
  CHECK(agent->calls == 2);
  CHECK_FALSE(c.holding());
  c.observe_evaluation({0.8, 0.9});
  CHECK(c.holding());
  const double held = c.barrier_ms();
  for (int r = 2; r < 6; ++r) CHECK(c.plan(at(r, 0, false)).barrier_ms == held);
  c.observe_evaluation({0.7, 1.2});  // a later dip does not release it
  CHECK(c.plan(at(6, 1, true)).barrier_ms == held);
  CHECK(agent->calls == 2);
  c.start(fake->view);  // a new run
  CHECK_FALSE(c.holding());
  c.plan(at(0, 0, true));
  CHECK(agent->calls == 3);

  // 0 (the default) never holds.
  options.hold_at_accuracy = 0;
  BarrierController never(options);
  never.set_agent(agent);
  never.start(fake->view);
  never.observe_evaluation({1.0, 0.0});
  never.plan(at(0, 0, true));
  CHECK_FALSE(never.holding());
  CHECK(agent->calls == 4);

  options.hold_at_accuracy = 1.5;
  CHECK_THROWS_WITH_AS(BarrierController{options}, doctest::Contains("hold_at_accuracy"), std::invalid_argument);
}

TEST_CASE("the controller rejects bad options and calls out of order") {
  CHECK_THROWS_WITH_AS(BarrierController(BarrierControllerOptions::fixed_t(0)),
                       doctest::Contains("fixed_barrier_ms: expected a positive number of ms"), std::invalid_argument);
  BarrierControllerOptions bad;
  bad.max_step_spread = -1;
  CHECK_THROWS_WITH_AS(BarrierController{bad}, doctest::Contains("max_step_spread"), std::invalid_argument);
  bad = {};
  bad.probe_repetitions = 0;
  CHECK_THROWS_AS(BarrierController{bad}, std::invalid_argument);

  BarrierController c;
  CHECK_THROWS_AS(c.plan(at(0, 0, true)), std::logic_error);
  CHECK_THROWS_WITH_AS(c.move_barrier(1), doctest::Contains("before start()"), std::logic_error);

  auto fake = cluster_a();
  fake->view.probe_step_ms = nullptr;
  CHECK_THROWS_WITH_AS(c.start(fake->view), doctest::Contains("probe_step_ms is not set"), std::invalid_argument);

  fake = cluster_a({32, 512, 512, 512});
  BarrierControllerOptions sizes;
  sizes.batch_sizes = {64, 64, 64, 64};
  BarrierController too_big(sizes);
  CHECK_THROWS_WITH_AS(too_big.start(fake->view), doctest::Contains("exceeds worker 0's max_batch 32"),
                       std::invalid_argument);
  sizes.batch_sizes = {64, 64};
  BarrierController too_few(sizes);
  CHECK_THROWS_WITH_AS(too_few.start(fake->view), doctest::Contains("expected 4 entries"), std::invalid_argument);
}
