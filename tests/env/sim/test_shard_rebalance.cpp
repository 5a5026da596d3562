// training.shards: rebalance and steal (epoch_data.hpp): an epoch's remaining samples shared out
// again when a worker taking part runs short while another (steal: a slower one) holds more than
// its round, so that a worker slowed mid-epoch does not train the epoch's tail alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "common/errors.hpp"
#include "env/sim/epoch_data.hpp"
#include "env/sim/round_rules.hpp"
#include "env/sim/simulation.hpp"

using namespace env;

namespace {

std::vector<std::int64_t> take(EpochData& data, int worker, std::int64_t count) {
  const IndexSpan span = data.take_shard(worker, count);
  return std::vector<std::int64_t>(span.data, span.data + span.size);
}

RoundPlan average_plan(std::vector<WorkerPlan> workers, std::vector<double> shares) {
  RoundPlan p;
  p.aggregation = Aggregation::ModelAverage;
  p.workers = std::move(workers);
  p.data_shares = std::move(shares);
  return p;
}

WorkerSpec worker(const std::string& name, double a0) {
  WorkerSpec w;
  w.name = name;
  w.time_model = std::make_shared<BatchTimeModel>(std::vector<double>{a0, 0.0});
  w.max_batch = 64;
  return w;
}

// Records every local step's samples, so that a test can see who trained on what.
struct SampleLog : TrainingHooks {
  std::vector<std::vector<std::int64_t>> seen{2};
  double gradient_round(const std::vector<IndexSpan>&) override { return 0.0; }
  std::vector<double> local_steps(const std::vector<std::vector<IndexSpan>>& batches) override {
    std::vector<double> losses;
    for (std::size_t i = 0; i < batches.size(); ++i)
      for (const IndexSpan& b : batches[i]) {
        seen[i].insert(seen[i].end(), b.data, b.data + b.size);
        losses.push_back(1.0);
      }
    return losses;
  }
  void average(const AverageGroup&, const std::vector<int>&) override {}
};

}  // namespace

TEST_CASE("reshare splits what is left of the epoch by the shares, and every sample is still used once") {
  EpochData data(100, 3, true);
  data.begin_shards(0, {0.5, 0.5});
  std::vector<std::int64_t> used = take(data, 0, 50);  // worker 0's shard is used up
  const std::vector<std::int64_t> more = take(data, 1, 10);
  used.insert(used.end(), more.begin(), more.end());
  REQUIRE(data.shard_remaining(0) == 0);
  data.reshare({0.75, 0.25});
  CHECK(data.consumed() == 60);
  CHECK(data.shard_remaining(0) == 30);
  CHECK(data.shard_remaining(1) == 10);
  CHECK(data.shard_size(0) == 30);
  CHECK_FALSE(data.exhausted());
  for (int w : {0, 1}) {
    const std::vector<std::int64_t> rest = take(data, w, 100);
    used.insert(used.end(), rest.begin(), rest.end());
  }
  CHECK(data.exhausted());
  CHECK(data.consumed() == 100);
  std::sort(used.begin(), used.end());
  std::vector<std::int64_t> all(100);
  std::iota(all.begin(), all.end(), 0);
  CHECK(used == all);

  SUBCASE("a second reshare keeps the first one's used samples") {
    data.begin_shards(1, {0.5, 0.5});
    std::vector<std::int64_t> again = take(data, 0, 50);
    data.reshare({0.5, 0.5});
    const std::vector<std::int64_t> a = take(data, 0, 20);
    again.insert(again.end(), a.begin(), a.end());
    data.reshare({0.0, 1.0});
    CHECK(data.shard_remaining(0) == 0);
    CHECK(data.consumed() == 70);
    const std::vector<std::int64_t> b = take(data, 1, 100);
    again.insert(again.end(), b.begin(), b.end());
    std::sort(again.begin(), again.end());
    CHECK(again == all);
  }
}

TEST_CASE("reshare refuses what begin_shards refuses, a list of the wrong size and a streamed epoch") {
  EpochData data(10, 1, false);
  data.begin_shards(0, {1.0, 1.0});
  CHECK_THROWS_AS(data.reshare({1.0}), std::invalid_argument);
  CHECK_THROWS_AS(data.reshare({0.0, 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(data.reshare({-1.0, 2.0}), std::invalid_argument);
  data.begin_stream(1);
  CHECK_THROWS_AS(data.reshare({1.0, 1.0}), std::invalid_argument);
}

TEST_CASE("rebalance_shards acts only when a worker taking part runs short while another holds more than its round") {
  EpochData data(64, 1, false);
  const RoundPlan plan = average_plan({{4, 2}, {4, 2}}, {0.5, 0.5});  // rounds of 8 samples each
  data.begin_shards(0, {0.5, 0.5});
  CHECK_FALSE(rebalance_shards(data, plan, ShardRule::Rebalance));  // 32 and 32: both hold their round
  take(data, 1, 28);
  CHECK(rebalance_shards(data, plan, ShardRule::Rebalance));  // worker 1: 4 < 8, worker 0: 32 > 8
  CHECK(data.shard_remaining(0) == 18);
  CHECK(data.shard_remaining(1) == 18);

  SUBCASE("epoch: never") {
    data.begin_shards(1, {0.5, 0.5});
    take(data, 1, 28);
    CHECK_FALSE(rebalance_shards(data, plan, ShardRule::Epoch));
  }
  SUBCASE("a worker out of the round (batch 0, or no steps) is never short") {
    data.begin_shards(1, {0.5, 0.5});
    take(data, 1, 32);
    CHECK_FALSE(rebalance_shards(data, average_plan({{4, 2}, {0, 2}}, {0.5, 0.5}), ShardRule::Rebalance));
    CHECK_FALSE(rebalance_shards(data, average_plan({{4, 2}, {4, 0}}, {0.5, 0.5}), ShardRule::Rebalance));
  }
  SUBCASE("the epoch's very end: everyone short, no one holds more than a round") {
    data.begin_shards(1, {0.5, 0.5});
    take(data, 0, 27);
    take(data, 1, 30);
    CHECK_FALSE(rebalance_shards(data, plan, ShardRule::Rebalance));
  }
  SUBCASE("one-shot plans run a shard to its end and are left alone") {
    data.begin_shards(1, {0.5, 0.5});
    take(data, 1, 32);
    CHECK_FALSE(rebalance_shards(data, average_plan({{4, kUntilShardEnd}, {4, kUntilShardEnd}}, {0.5, 0.5}), ShardRule::Steal));
  }
  SUBCASE("gradient all-reduce streams the epoch: nothing to rebalance") {
    data.begin_stream(1);
    RoundPlan gradient = plan;
    gradient.aggregation = Aggregation::GradientAllReduce;
    CHECK_FALSE(rebalance_shards(data, gradient, ShardRule::Rebalance));
  }
}

TEST_CASE("steal moves data only towards faster workers, split by each worker's samples a round") {
  EpochData data(64, 1, false);
  const RoundPlan plan = average_plan({{4, 4}, {4, 1}}, {0.5, 0.5});  // worker 0 takes 16 a round, worker 1 (slower) 4
  SUBCASE("the fast worker runs short while the slow one holds data: it steals") {
    data.begin_shards(0, {0.5, 0.5});
    take(data, 0, 29);
    REQUIRE(data.shard_remaining(0) == 3);
    CHECK(rebalance_shards(data, plan, ShardRule::Steal));
    CHECK(data.shard_remaining(0) == 28);  // the 35 left, 16 : 4
    CHECK(data.shard_remaining(1) == 7);
  }
  SUBCASE("the slow worker runs short while the fast one holds data: the fast ones' tail is kept") {
    data.begin_shards(0, {0.5, 0.5});
    take(data, 1, 30);
    REQUIRE(data.shard_remaining(1) == 2);
    CHECK_FALSE(rebalance_shards(data, plan, ShardRule::Steal));
    CHECK(rebalance_shards(data, plan, ShardRule::Rebalance));  // rebalance deals it back 1:1
    CHECK(data.shard_remaining(1) == 17);
  }
}

TEST_CASE("a worker slowed mid-epoch: fixed shards leave it the epoch's tail, rebalance ends the epoch together") {
  // 64 samples shared 1:1 by speeds measured before worker 1 slowed to a quarter of worker 0's
  // pace: per round (the barrier) worker 0 takes 4 steps of 4, worker 1 one.
  for (ShardRule rule : {ShardRule::Epoch, ShardRule::Rebalance, ShardRule::Steal}) {
    CAPTURE(shard_rule_name(rule));
    SimulationSpec s;
    s.cluster.workers = {worker("fast", 1.0), worker("slowed", 4.0)};
    s.cluster.server_names = {"s0"};
    s.network.intra_server = {0.1, 1000.0};
    s.global_batch = 8;
    s.train_samples = 64;
    s.message_bytes = 1000;
    s.shards = rule;
    SampleLog log;
    Simulation sim(s, 1, &log);
    const RoundPlan plan = average_plan({{4, 4}, {4, 1}}, {0.5, 0.5});
    std::vector<RoundReport> rounds;
    while (!sim.epoch_finished()) rounds.push_back(sim.run_round(plan));
    int alone = 0;
    for (const RoundReport& r : rounds) alone += r.workers[0].local_steps == 0 ? 1 : 0;
    std::vector<std::int64_t> every(log.seen[0]);
    every.insert(every.end(), log.seen[1].begin(), log.seen[1].end());
    std::sort(every.begin(), every.end());
    CHECK(every.size() == 64);
    CHECK(std::adjacent_find(every.begin(), every.end()) == every.end());  // each sample once
    if (rule == ShardRule::Epoch) {
      // Worker 0's 32 samples last 2 rounds; worker 1 needs 8 rounds for its 32, 6 of them alone.
      CHECK(rounds.size() == 8);
      CHECK(alone == 6);
    } else {
      // Round 3: worker 0 is short, worker 1 holds 24, shared 12:12 (steal: 19:5, by 16 and 4 a
      // round); round 4: what is left. Four rounds, both workers in each.
      CHECK(rounds.size() == 4);
      CHECK(alone == 0);
      CHECK(log.seen[0].size() > log.seen[1].size());
    }
  }
}
