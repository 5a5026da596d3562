// The round rules the simulated cluster and real runs share (env/sim/round_rules.hpp), by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "common/errors.hpp"
#include "env/sim/round_rules.hpp"

namespace {

env::RoundPlan uniform_averaging(std::vector<env::WorkerPlan> workers) {
  env::RoundPlan p;
  p.aggregation = env::Aggregation::ModelAverage;
  p.workers = std::move(workers);
  return p;
}

env::ClusterSpec two_workers() {
  env::ClusterSpec c;
  c.server_names = {"s"};
  for (const char* name : {"a", "b"}) {
    env::WorkerSpec w;
    w.name = name;
    w.max_batch = 64;
    c.workers.push_back(w);
  }
  return c;
}

}  // namespace

TEST_CASE("round rules: data shares follow B_i * tau_i unless the plan gives them, a worker with batch 0 sits out") {
  CHECK(env::epoch_data_shares(uniform_averaging({{32, 2}, {16, 8}})) == std::vector<double>{64, 128});
  CHECK(env::epoch_data_shares(uniform_averaging({{32, env::kUntilShardEnd}, {0, 4}})) == std::vector<double>{32, 0});
  auto given = uniform_averaging({{32, 2}, {16, 8}});
  given.data_shares = {0.75, 0.25};
  CHECK(env::epoch_data_shares(given) == std::vector<double>{0.75, 0.25});
  given.data_shares = {1.0};
  CHECK_THROWS_WITH_AS(env::epoch_data_shares(given), "data_shares has 1 entries for 2 workers", common::PlanError);
}

TEST_CASE("round rules: plans are checked against the cluster, with the worker's name") {
  const auto c = two_workers();
  CHECK_NOTHROW(env::validate_plan(uniform_averaging({{32, 2}, {0, 0}}), c, false, env::Aggregation::GradientAllReduce));
  CHECK_THROWS_WITH_AS(env::validate_plan(uniform_averaging({{65, 2}, {1, 1}}), c, false, env::Aggregation::ModelAverage),
                       "worker a: batch 65 outside [0, max_batch 64]", common::PlanError);
  CHECK_THROWS_WITH_AS(env::validate_plan(uniform_averaging({{0, 2}, {0, 1}}), c, false, env::Aggregation::ModelAverage),
                       "plan gives no worker any work", common::PlanError);
  CHECK_THROWS_WITH_AS(env::validate_plan(uniform_averaging({{8, 2}, {8, 1}}), c, true, env::Aggregation::GradientAllReduce),
                       "aggregation changed inside an epoch", common::PlanError);
}

TEST_CASE("round rules: batches left, cosine learning rate, the cluster view's all-reduce estimate") {
  CHECK(env::batches_left(100, 32) == 4);
  CHECK(env::batches_left(96, 32) == 3);
  CHECK(env::batches_left(100, 0) == 0);
  CHECK(env::cosine_learning_rate(0.1, 0, 4) == doctest::Approx(0.1));
  CHECK(env::cosine_learning_rate(0.1, 2, 4) == doctest::Approx(0.05));
  CHECK(env::cosine_learning_rate(0.1, 9, 4) == doctest::Approx(0.0));
  env::NetworkSpec network;
  const auto view = env::make_cluster_view(two_workers(), network, 64, 1000, 4e6);
  CHECK(view.worker_names == std::vector<std::string>{"a", "b"});
  CHECK(view.allreduce_ms(2) == doctest::Approx(env::ring_allreduce_ms(2, 4e6, network.intra_server)));
}

TEST_CASE("round rules: an epoch's tally sums busy, idle and steps, and averages SE and loss, by hand") {
  env::EpochTally tally(2);
  tally.start(100);
  env::RoundReport r;
  r.workers = {{32, 2, 64, 30, 10}, {32, 1, 32, 40, 0}};
  r.straggler_effect = 0.5;
  tally.add_round(r);
  r.straggler_effect = 0.1;
  tally.add_round(r);
  tally.add_loss(3.0, 2);
  tally.add_loss(1.0, 2);
  const env::EpochReport e = tally.finish(3, 260);
  CHECK(e.epoch == 3);
  CHECK(e.rounds == 2);
  CHECK(e.epoch_ms == 160);
  CHECK(e.worker_busy_ms == std::vector<double>{60, 80});
  CHECK(e.worker_idle_ms == std::vector<double>{20, 0});
  CHECK(e.worker_steps == std::vector<std::int64_t>{4, 2});
  CHECK(e.mean_straggler_effect == doctest::Approx(0.3));
  CHECK(e.train_loss == doctest::Approx(1.0));
  CHECK(e.utilization == doctest::Approx(140.0 / (2 * 160)));
  CHECK(std::isnan(e.accuracy));
  // start() clears the previous epoch.
  tally.start(260);
  CHECK(tally.finish(4, 300).rounds == 0);
}
