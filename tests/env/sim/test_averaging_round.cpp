// The one description of a model-averaging round (env/sim/averaging_round.hpp), worked out by
// hand: steps and samples from the shards, MLLSGD's chunks and in-server averages, the global
// average's members and weights under each weighting, FedNova's tau_eff. The simulator and the
// real worker both run it; tests/env/real/test_real.cpp checks that they then train alike.
#include <doctest/doctest.h>

#include "env/sim/averaging_round.hpp"
#include "env/sim/round_rules.hpp"

using namespace env;

namespace {

// Four workers, two per server.
ClusterSpec two_servers() {
  ClusterSpec c;
  c.server_names = {"s0", "s1"};
  for (int i = 0; i < 4; ++i) {
    WorkerSpec w;
    w.name = std::string(1, static_cast<char>('a' + i));
    w.server = i / 2;
    c.workers.push_back(w);
  }
  return c;
}

// 100 samples shared 40 : 30 : 20 : 10, opened for `plan`.
EpochData opened(RoundPlan& plan) {
  plan.data_shares = {0.4, 0.3, 0.2, 0.1};
  EpochData data(100, 1, false);
  open_epoch(data, 0, plan);
  return data;
}

RoundPlan averaging(std::vector<WorkerPlan> workers, AverageWeighting weighting = AverageWeighting::Uniform) {
  RoundPlan p;
  p.aggregation = Aggregation::ModelAverage;
  p.weighting = weighting;
  p.workers = std::move(workers);
  return p;
}

}  // namespace

TEST_CASE("averaging round: steps are tau_i cut at the shard's end, samples count the short last batch") {
  // Shards 40, 30, 20, 10 at batch 8: 5, 4, 3, 2 batches left (the last ones of 6, 4, 2 samples).
  RoundPlan p = averaging({{8, 6}, {8, 2}, {8, 3}, {8, 4}});
  EpochData data = opened(p);
  const AveragingRound r = describe_averaging_round(p, two_servers(), data);
  CHECK(r.steps == std::vector<std::int64_t>{5, 2, 3, 2});
  CHECK(r.samples == std::vector<std::int64_t>{40, 16, 20, 10});
  CHECK(r.took_part == std::vector<int>{0, 1, 2, 3});
  REQUIRE(r.chunks.size() == 1);  // flat: one chunk, no in-server average
  CHECK(r.chunks[0].first == 0);
  CHECK(r.chunks[0].end == 5);
  CHECK(r.chunks[0].server_averages.empty());
  CHECK_FALSE(r.hierarchical);
  CHECK(r.global.members == std::vector<int>{0, 1, 2, 3});
  CHECK(r.global.weights == std::vector<double>{0.25, 0.25, 0.25, 0.25});
  CHECK_FALSE(r.global.needs_round_start());
}

TEST_CASE("averaging round: MLLSGD's chunks of H1 steps, each but the last closed by an average inside each server") {
  // tau = 5, 5, 1, 0 with H1 = 2: chunks [0,2) [2,4) [4,6); server s0 averages a and b after the
  // first two; in s1 only c steps in the first chunk (alone: weight 1), and nobody after that.
  RoundPlan p = averaging({{4, 5}, {4, 5}, {4, 1}, {0, 1}});
  p.server_average_every = 2;
  EpochData data = opened(p);
  const AveragingRound r = describe_averaging_round(p, two_servers(), data);
  CHECK(r.steps == std::vector<std::int64_t>{5, 5, 1, 0});
  CHECK(r.hierarchical);
  REQUIRE(r.chunks.size() == 3);
  REQUIRE(r.chunks[0].server_averages.size() == 2);
  CHECK(r.chunks[0].server_averages[0].members == std::vector<int>{0, 1});
  CHECK(r.chunks[0].server_averages[0].weights == std::vector<double>{0.5, 0.5});
  CHECK(r.chunks[0].server_averages[1].members == std::vector<int>{2});
  CHECK(r.chunks[0].server_averages[1].weights == std::vector<double>{1.0});
  REQUIRE(r.chunks[1].server_averages.size() == 1);
  CHECK(r.chunks[1].server_averages[0].members == std::vector<int>{0, 1});
  CHECK(r.chunks[2].server_averages.empty());  // the global average closes the last chunk
  // A worker with batch 0 sits out: not a member of the global average under uniform ...
  CHECK(r.global.members == std::vector<int>{0, 1, 2});
  CHECK(r.global.weight_of(3) == 0.0);
  CHECK_FALSE(r.global.contains(3));
  // ... but under all_workers (Eq. 2 with N fixed) every worker counts 1/N.
  p.weighting = AverageWeighting::AllWorkers;
  const AveragingRound all = describe_averaging_round(p, two_servers(), data);
  CHECK(all.global.members == std::vector<int>{0, 1, 2, 3});
  CHECK(all.global.weight_of(3) == 0.25);
}

TEST_CASE("averaging round: by samples, and FedNova's sample shares, effective steps and tau_eff") {
  RoundPlan p = averaging({{8, 6}, {8, 2}, {8, 3}, {8, 4}}, AverageWeighting::BySamples);
  EpochData data = opened(p);
  const AveragingRound by_samples = describe_averaging_round(p, two_servers(), data);
  // Samples 40, 16, 20, 10 of 86.
  CHECK(by_samples.global.weights[0] == doctest::Approx(40.0 / 86));
  CHECK(by_samples.global.weights[1] == doctest::Approx(16.0 / 86));
  CHECK_FALSE(by_samples.global.needs_round_start());

  p.weighting = AverageWeighting::FedNova;
  p.outer = OuterOptimizer{0.7, 0.9, true};
  const AveragingRound fednova = describe_averaging_round(p, two_servers(), data);
  CHECK(fednova.global.weights == by_samples.global.weights);
  CHECK(fednova.global.steps == std::vector<int>{5, 2, 3, 2});
  CHECK(fednova.global.fednova);
  CHECK(fednova.global.needs_round_start());
  REQUIRE(fednova.global.outer.has_value());
  CHECK(fednova.global.outer->lr == 0.7);
  // Without momentum a_i = tau_i: tau_eff = (40*5 + 16*2 + 20*3 + 10*2) / 86.
  CHECK(fednova.global.effective_steps(0.0) == std::vector<double>{5, 2, 3, 2});
  CHECK(fednova.global.tau_eff(0.0) == doctest::Approx((40.0 * 5 + 16 * 2 + 20 * 3 + 10 * 2) / 86));
  // With momentum 0.5: a(2) = 1 + 1.5, a(3) = 1 + 1.5 + 1.75.
  CHECK(fednova.global.effective_steps(0.5)[1] == doctest::Approx(2.5));
  CHECK(fednova.global.effective_steps(0.5)[2] == doctest::Approx(4.25));
}

TEST_CASE("averaging round: nobody with data left gives no chunk and no average") {
  RoundPlan p = averaging({{8, 2}, {8, 2}, {8, 2}, {8, 2}});
  EpochData data = opened(p);
  for (int i = 0; i < 4; ++i)
    while (data.shard_remaining(i) > 0) data.take_shard(i, 8);
  const AveragingRound r = describe_averaging_round(p, two_servers(), data);
  CHECK(r.chunks.empty());
  CHECK(r.took_part.empty());
  CHECK(r.global.members.empty());
}
