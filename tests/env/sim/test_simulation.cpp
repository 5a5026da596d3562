// The simulated clock: step times, barriers, idle time, communication cost, epochs, perturbations.
#include <doctest/doctest.h>

#include <cmath>

#include "common/errors.hpp"
#include "env/sim/network.hpp"
#include "env/sim/simulation.hpp"

using namespace env;

namespace {

WorkerSpec worker(const std::string& name, double a0, double a1, int server = 0, int max_batch = 1024) {
  WorkerSpec w;
  w.name = name;
  w.time_model = std::make_shared<BatchTimeModel>(std::vector<double>{a0, a1});
  w.max_batch = max_batch;
  w.server = server;
  return w;
}

SimulationSpec two_worker_spec() {
  SimulationSpec s;
  s.cluster.workers = {worker("fast", 2.0, 0.5), worker("slow", 4.0, 1.0)};
  s.cluster.server_names = {"s0"};
  s.network.intra_server = {0.1, 1000.0};  // 0.1 ms latency, 1000 B/ms
  s.global_batch = 8;
  s.train_samples = 32;
  s.message_bytes = 1000;
  return s;
}

RoundPlan gradient_plan(int b0, int b1) {
  RoundPlan p;
  p.aggregation = Aggregation::GradientAllReduce;
  p.workers = {{b0, 1}, {b1, 1}};
  return p;
}

}  // namespace

TEST_CASE("every averaging weighting reads back from its spelling, an unknown spelling reads as none") {
  for (auto w : kAverageWeightings) CHECK(weighting_from_name(weighting_name(w)) == w);
  CHECK(weighting_from_name("all_workers") == AverageWeighting::AllWorkers);
  CHECK_FALSE(weighting_from_name("All_Workers").has_value());
  CHECK_FALSE(weighting_from_name("").has_value());
}

TEST_CASE("ring all-reduce cost is 2(N-1) alpha + 2(N-1)/N bytes/beta") {
  CHECK(ring_allreduce_ms(1, 1e6, {1.0, 1000.0}) == 0.0);
  // N = 4: 6 * 0.5 + 1.5 * 8000 / 1000 = 3 + 12
  CHECK(ring_allreduce_ms(4, 8000, {0.5, 1000.0}) == doctest::Approx(15.0));
}

TEST_CASE("a gradient round waits for the slowest worker, then communicates") {
  Simulation sim(two_worker_spec(), 1, nullptr);
  const RoundReport r = sim.run_round(gradient_plan(4, 4));
  // fast: 2 + 0.5*4 = 4 ms; slow: 4 + 4 = 8 ms; comm: 2*0.1 + 1*1000/1000 = 1.2 ms
  CHECK(r.workers[0].compute_ms == doctest::Approx(4.0));
  CHECK(r.workers[1].compute_ms == doctest::Approx(8.0));
  CHECK(r.workers[0].idle_ms == doctest::Approx(4.0));
  CHECK(r.workers[1].idle_ms == doctest::Approx(0.0));
  CHECK(r.comm_ms == doctest::Approx(1.2));
  CHECK(r.round_ms == doctest::Approx(9.2));
  CHECK(r.straggler_effect == doctest::Approx((8.0 - 4.0) / 6.0));  // LBB Eq. 4
}

TEST_CASE("an epoch under gradient all-reduce is train_samples / B rounds") {
  Simulation sim(two_worker_spec(), 1, nullptr);
  int rounds = 0;
  while (!sim.epoch_finished()) {
    sim.run_round(gradient_plan(6, 2));
    ++rounds;
  }
  CHECK(rounds == 4);  // 32 samples / 8
  const EpochReport e = sim.finish_epoch();
  CHECK(e.rounds == 4);
  CHECK(e.worker_steps[0] == 4);
  // busy = 4 rounds * (5 + 6) ms; elapsed = 4 * (max(5, 6) + 1.2)
  CHECK(e.utilization == doctest::Approx(4 * 11.0 / (2 * 4 * 7.2)));
  CHECK(std::isnan(e.accuracy));
}

TEST_CASE("model averaging: each worker takes tau_i local steps over its own shard") {
  SimulationSpec s = two_worker_spec();
  Simulation sim(s, 1, nullptr);
  RoundPlan p;
  p.aggregation = Aggregation::ModelAverage;
  p.workers = {{4, 3}, {4, 1}};  // shares default to B_i*tau_i: 24 and 8 samples
  const RoundReport r = sim.run_round(p);
  CHECK(r.workers[0].local_steps == 3);
  CHECK(r.workers[1].local_steps == 1);
  CHECK(r.workers[0].compute_ms == doctest::Approx(12.0));  // 3 * (2 + 2)
  CHECK(r.workers[1].compute_ms == doctest::Approx(8.0));
  CHECK(r.workers[1].idle_ms == doctest::Approx(4.0));
  CHECK(r.epoch_end == false);
  sim.run_round(p);
  CHECK(sim.epoch_finished());
}

TEST_CASE("data shares from the plan size the shards") {
  Simulation sim(two_worker_spec(), 1, nullptr);
  RoundPlan p;
  p.aggregation = Aggregation::ModelAverage;
  p.workers = {{4, kUntilShardEnd}, {4, kUntilShardEnd}};
  p.data_shares = {0.75, 0.25};
  const RoundReport r = sim.run_round(p);  // one-shot: the whole shard in one round
  CHECK(r.workers[0].samples == 24);
  CHECK(r.workers[1].samples == 8);
  CHECK(r.epoch_end);
}

TEST_CASE("perturbations slow a worker inside their interval, periodically if asked") {
  Perturbation p;
  p.start_s = 1.0;
  p.end_s = 3.0;
  p.add_ms = 50;
  CHECK_FALSE(p.active_at(0.5));
  CHECK(p.active_at(1.5));
  CHECK_FALSE(p.active_at(3.0));
  p.period_s = 1.0;
  p.active_s = 0.25;
  CHECK(p.active_at(2.1));
  CHECK_FALSE(p.active_at(2.5));
  // Each period's start, in decimal: fmod(0.3 - 0.1, 0.1) is 0.0999..., and steps at 300, 600
  // and 700 ms read as their period's end (off) where they are its start (on).
  Perturbation cyclic;
  cyclic.start_s = 0.1;
  cyclic.period_s = 0.1;
  cyclic.active_s = 0.05;
  for (int k = 1; k <= 100; ++k) {
    CAPTURE(k);
    CHECK(cyclic.active_at(0.1 * k));
    CHECK(cyclic.active_at(0.1 * k + 0.04));
    CHECK_FALSE(cyclic.active_at(0.1 * k + 0.06));
  }

  SimulationSpec s = two_worker_spec();
  Perturbation slow;
  slow.worker = 0;
  slow.slowdown = 3.0;
  slow.add_ms = 1.0;
  s.cluster.perturbations = {slow};
  SimulatedCluster cluster(s.cluster, 1);
  CHECK(cluster.step_ms(0, 4, 0.0) == doctest::Approx(4.0 * 3 + 1));
  CHECK(cluster.step_ms(1, 4, 0.0) == doctest::Approx(8.0));
}

TEST_CASE("noise is seeded per worker: same seed same times, whatever the order asked") {
  SimulationSpec s = two_worker_spec();
  for (auto& w : s.cluster.workers) w.noise = 0.1;
  SimulatedCluster a(s.cluster, 7), b(s.cluster, 7), c(s.cluster, 8);
  const double a0 = a.step_ms(0, 4, 0), a1 = a.step_ms(1, 4, 0);
  const double b1 = b.step_ms(1, 4, 0), b0 = b.step_ms(0, 4, 0);
  CHECK(a0 == b0);
  CHECK(a1 == b1);
  CHECK(a0 != c.step_ms(0, 4, 0));
  CHECK(a0 != doctest::Approx(4.0).epsilon(1e-9));
}

TEST_CASE("MLLSGD averages inside servers every H1 steps over the fast link") {
  SimulationSpec s;
  s.cluster.workers = {worker("a", 1, 0, 0), worker("b", 2, 0, 0), worker("c", 1, 0, 1), worker("d", 1, 0, 1)};
  s.cluster.server_names = {"s0", "s1"};
  s.network.intra_server = {0.0, 1e9};
  s.network.inter_server = {1.0, 1e9};
  s.global_batch = 4;
  s.train_samples = 16;
  s.message_bytes = 1;
  Simulation sim(s, 1, nullptr);
  RoundPlan p;
  p.aggregation = Aggregation::ModelAverage;
  p.workers = {{1, 4}, {1, 4}, {1, 4}, {1, 4}};
  p.server_average_every = 2;
  const RoundReport r = sim.run_round(p);
  // server s0: b takes 2 ms a step, a waits 2 ms at the mid-round barrier and 2 at the end.
  CHECK(r.workers[0].idle_ms == doctest::Approx(4.0));
  CHECK(r.workers[1].idle_ms == doctest::Approx(0.0));
  // server s1 finishes at 4 ms and waits for s0 (8 ms).
  CHECK(r.workers[2].idle_ms == doctest::Approx(4.0));
  // global: ring over 2 servers on the slow link (2*1*1 ms) + ring inside a server (free).
  CHECK(r.comm_ms == doctest::Approx(2.0).epsilon(1e-6));
}

TEST_CASE("plans the cluster cannot run are rejected with a reason") {
  Simulation sim(two_worker_spec(), 1, nullptr);
  CHECK_THROWS_WITH_AS(sim.run_round(gradient_plan(2000, 4)), doctest::Contains("outside [0, max_batch"), common::PlanError);
  RoundPlan wrong = gradient_plan(4, 4);
  wrong.workers.pop_back();
  CHECK_THROWS_AS(sim.run_round(wrong), common::PlanError);
  CHECK_THROWS_AS(sim.run_round(gradient_plan(0, 0)), common::PlanError);
}

TEST_CASE("profiling time is charged to the clock before the first round") {
  Simulation sim(two_worker_spec(), 1, nullptr);
  ClusterView view = sim.view();
  CHECK(view.probe_step_ms(1, 4) == doctest::Approx(8.0));
  CHECK(view.probe_step_ms(0, 4) == doctest::Approx(4.0));
  const RoundReport r = sim.run_round(gradient_plan(4, 4));
  CHECK(r.clock_ms == doctest::Approx(8.0 + 9.2));  // the slowest worker's probing, then the round
}

TEST_CASE("the epoch's short last global batch shrinks every B_i in proportion") {
  const std::vector<WorkerPlan> plan{{6, 1}, {2, 1}};
  CHECK(stream_batch_sizes(plan, 100) == std::vector<std::int64_t>{6, 2});
  CHECK(stream_batch_sizes(plan, 4) == std::vector<std::int64_t>{3, 1});
  CHECK(stream_batch_sizes(plan, 5) == std::vector<std::int64_t>{4, 1});  // 3.75 -> 3, 1.25 -> 1, one more to the first
  CHECK(stream_batch_sizes({{0, 1}, {4, 1}}, 3) == std::vector<std::int64_t>{0, 3});
}

namespace {

// Records the model averages a round asks for.
struct AverageLog : TrainingHooks {
  struct Call {
    std::vector<int> members;
    std::vector<double> weights;
  };
  std::vector<Call> calls;
  double gradient_round(const std::vector<IndexSpan>&) override { return 0.0; }
  std::vector<double> local_steps(const std::vector<std::vector<IndexSpan>>& batches) override {
    std::size_t steps = 0;
    for (const auto& b : batches) steps += b.size();
    return std::vector<double>(steps, 0.0);
  }
  void average(const AverageGroup& group, const std::vector<int>&) override { calls.push_back({group.members, group.weights}); }
};

}  // namespace

TEST_CASE("an epoch's last rounds: uniform averages the workers that took part, all_workers every worker with 1/N") {
  // Worker 0 holds 24 of the 32 samples, worker 1 holds 8: with B = 4 and tau = 2 each, round 1
  // uses 8 + 8 samples, and in rounds 2 and 3 only worker 0 has data left.
  RoundPlan p;
  p.aggregation = Aggregation::ModelAverage;
  p.workers = {{4, 2}, {4, 2}};
  p.data_shares = {0.75, 0.25};
  const double both = ring_allreduce_ms(2, 1000, {0.1, 1000.0});
  for (AverageWeighting weighting : {AverageWeighting::Uniform, AverageWeighting::AllWorkers}) {
    CAPTURE(weighting_name(weighting));
    p.weighting = weighting;
    AverageLog log;
    Simulation sim(two_worker_spec(), 1, &log);
    std::vector<RoundReport> rounds;
    while (!sim.epoch_finished()) rounds.push_back(sim.run_round(p));
    REQUIRE(rounds.size() == 3);
    REQUIRE(log.calls.size() == 3);
    CHECK(rounds[0].comm_ms == doctest::Approx(both));
    CHECK(log.calls[0].members == std::vector<int>{0, 1});
    CHECK(log.calls[0].weights == std::vector<double>{0.5, 0.5});
    for (std::size_t r = 1; r < 3; ++r) {
      CHECK(rounds[r].workers[1].local_steps == 0);
      if (weighting == AverageWeighting::Uniform) {
        // Worker 0 alone sets the global model, and a one-worker all-reduce costs nothing.
        CHECK(log.calls[r].members == std::vector<int>{0});
        CHECK(log.calls[r].weights == std::vector<double>{1.0});
        CHECK(rounds[r].comm_ms == 0.0);
      } else {
        // Eq. 2 with N fixed: worker 1 adds the global model it holds, over the full all-reduce.
        CHECK(log.calls[r].members == std::vector<int>{0, 1});
        CHECK(log.calls[r].weights == std::vector<double>{0.5, 0.5});
        CHECK(rounds[r].comm_ms == doctest::Approx(both));
      }
    }
  }
}
