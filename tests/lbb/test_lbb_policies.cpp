// LBB, BOA and LB-BSP as barrier policies, driven by a fake cluster whose step times come from
// known linear models shaped like LBB Table 2 (ms): GTX 1070 x2: 6.6 + 0.586 B, Tesla M40:
// 8.3 + 0.602 B, GTX 750: 51.0 + 2.671 B. Equal batches of 128 take ~392.9 ms on the 750;
// balanced, every worker takes ~104.5 ms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "common/errors.hpp"
#include "env/barrier_policy.hpp"
#include "lbb/boa_policy.hpp"
#include "lbb/lb_bsp_policy.hpp"
#include "lbb/lbb_policy.hpp"
#include "lbb/straggler_effect.hpp"

namespace {

constexpr int kGlobalBatch = 512;

class FakeCluster {
 public:
  std::vector<double> a0{6.6, 6.6, 8.3, 51.0};
  std::vector<double> a1{0.586, 0.586, 0.602, 2.671};
  std::vector<double> extra_ms{0, 0, 0, 0};  // a perturbation, as in LBB Sec. 4.4
  double noise = 0.0;                         // relative spread of each step time, seeded
  int probes = 0;

  explicit FakeCluster(unsigned seed = 1) : rng_(seed) {}

  double step_ms(int worker, int batch) {
    const auto w = static_cast<std::size_t>(worker);
    if (batch <= 0) return 0.0;
    const double factor = noise > 0 ? std::uniform_real_distribution<double>(1 - noise, 1 + noise)(rng_) : 1.0;
    return (a0[w] + extra_ms[w] + a1[w] * batch) * factor;
  }

  env::ClusterView view() {
    env::ClusterView v;
    v.num_workers = 4;
    v.global_batch = kGlobalBatch;
    v.worker_names = {"gtx1070-a", "gtx1070-b", "m40", "gtx750"};
    v.max_batch = {1024, 1024, 1024, 256};
    v.probe_step_ms = [this](int worker, int batch) {
      ++probes;
      return step_ms(worker, batch);
    };
    v.allreduce_ms = [](int) { return 5.0; };
    return v;
  }

  // One synchronous round of `plan`; `cut` shortens every batch (the end of an epoch's data).
  env::RoundReport run(const env::RoundPlan& plan, std::int64_t round, int epoch, int cut = 0) {
    env::RoundReport report;
    report.round = round;
    report.epoch = epoch;
    std::vector<double> times;
    std::vector<int> batches;
    for (std::size_t i = 0; i < plan.workers.size(); ++i) {
      env::WorkerRoundStats w;
      w.batch_size = std::max(0, plan.workers[i].batch_size - cut);
      w.local_steps = 1;
      w.samples = w.batch_size;
      w.compute_ms = step_ms(static_cast<int>(i), w.batch_size);
      report.workers.push_back(w);
      times.push_back(w.compute_ms);
      batches.push_back(w.batch_size);
    }
    report.straggler_effect = lbb::straggler_effect(times, batches);
    return report;
  }

 private:
  std::mt19937 rng_;
};

void check_plan(const env::RoundPlan& plan) {
  CHECK(plan.aggregation == env::Aggregation::GradientAllReduce);
  REQUIRE(plan.workers.size() == 4);
  int sum = 0;
  for (const auto& w : plan.workers) {
    CHECK(w.local_steps == 1);
    CHECK(w.batch_size >= 0);
    sum += w.batch_size;
  }
  CHECK(sum == kGlobalBatch);
  CHECK(plan.workers[3].batch_size <= 256);
}

// Runs `rounds` rounds of `policy`, epoch `epoch`; returns the last round's report.
env::RoundReport drive(env::BarrierPolicy& policy, FakeCluster& cluster, int rounds, std::int64_t& round,
                       int epoch = 0) {
  env::RoundReport report;
  for (int r = 0; r < rounds; ++r, ++round) {
    const env::RoundPlan plan = policy.plan({round, epoch, r == 0, 0.0});
    check_plan(plan);
    report = cluster.run(plan, round, epoch);
    policy.observe_round(report);
  }
  return report;
}

int batch_of(const env::RoundPlan& plan, int worker) { return plan.workers[static_cast<std::size_t>(worker)].batch_size; }

}  // namespace

TEST_CASE("LBB Alg. 1: profiling and Eq. 3 balance the Table 2 cluster") {
  FakeCluster cluster;
  lbb::LbbPolicy policy;
  policy.start(cluster.view());
  // 5 repetitions of 2..256 and 512 on three workers (9 sizes), of 2..128 and 256 on the 750.
  CHECK(cluster.probes == 5 * (3 * 9 + 8));
  REQUIRE(policy.profiles().size() == 4);
  CHECK(policy.profiles()[3].points.size() == 8);
  CHECK(policy.profiles()[3].model.eval(20) == doctest::Approx(51.0 + 2.671 * 20));
  const auto plan = policy.plan({0, 0, true, 0.0});
  check_plan(plan);
  // From 392.9 ms (equal split) to 104.46 ms; enumeration gives (167, 166, 159, 20).
  CHECK(policy.profiled_allocation().iteration_ms == doctest::Approx(104.462).epsilon(1e-6));
  CHECK(batch_of(plan, 0) + batch_of(plan, 1) == 333);
  CHECK(batch_of(plan, 2) == 159);
  CHECK(batch_of(plan, 3) == 20);
}

TEST_CASE("LBB Alg. 2: a perturbed worker is rapid-tuned, then fine-tuned below FT") {
  FakeCluster cluster;
  lbb::LbbPolicy policy;
  policy.start(cluster.view());
  std::int64_t round = 0;
  auto report = drive(policy, cluster, 3, round);
  CHECK(report.straggler_effect < 0.05);
  CHECK(policy.stats().fine_tunes + policy.stats().rapid_tunes == 0);

  cluster.extra_ms[2] = 50.0;  // the M40 slows by 50 ms per step (LBB Sec. 4.4)
  report = drive(policy, cluster, 1, round);
  CHECK(report.straggler_effect > 0.3);
  CHECK(policy.last_tune().action == lbb::TuneAction::Rapid);
  // Rough model of the M40: a0 = 8.3 from profiling, a1 = (154.018 - 8.3) / 159 = 0.9165; the
  // others' rough models are exact. Enumeration: (186, 185, 117, 24) at a predicted 115.596 ms.
  CHECK(policy.batch_sizes()[2] == 117);
  CHECK(policy.batch_sizes()[3] == 24);
  report = drive(policy, cluster, 1, round);
  // The rough model keeps the profiled a0, but the perturbation is start-up time, so the M40
  // still runs long: 58.3 + 0.602 * 117 = 128.734 ms against 115.010..115.596 ms, SE = 0.1157.
  // Below RT: from here fine-tuning takes over (Sec. 3.2.3).
  CHECK(report.workers[2].compute_ms == doctest::Approx(128.734));
  CHECK(report.straggler_effect == doctest::Approx((128.734 - 115.010) / ((115.596 + 115.010 + 128.734 + 115.104) / 4)));
  CHECK(policy.last_tune().action == lbb::TuneAction::Fine);
  report = drive(policy, cluster, 40, round);
  CHECK(report.straggler_effect < 0.05);
  CHECK(policy.stats().rapid_tunes == 1);
}

TEST_CASE("LBB without profiling starts from the equal split and rapid-tunes away from it") {
  FakeCluster cluster;
  lbb::LbbOptions options;
  options.profiling = false;
  lbb::LbbPolicy policy(options);
  policy.start(cluster.view());
  CHECK(cluster.probes == 0);
  CHECK(policy.batch_sizes() == std::vector<int>{128, 128, 128, 128});
  std::int64_t round = 0;
  auto report = drive(policy, cluster, 1, round);
  CHECK(report.workers[3].compute_ms == doctest::Approx(392.888));
  CHECK(policy.last_tune().action == lbb::TuneAction::Rapid);
  // With a0 = 0 the rough models are t / 128 per sample: the 750 gets about 1/15 of B.
  CHECK(policy.batch_sizes()[3] < 40);
  report = drive(policy, cluster, 60, round);
  CHECK(report.straggler_effect < 0.05);
}

TEST_CASE("LBB with dynamic tuning off keeps the profiled split, short rounds are skipped") {
  FakeCluster cluster;
  lbb::LbbOptions options;
  options.dynamic_tuning = false;
  lbb::LbbPolicy fixed(options);
  fixed.start(cluster.view());
  const auto before = fixed.batch_sizes();
  cluster.extra_ms[2] = 50.0;
  std::int64_t round = 0;
  drive(fixed, cluster, 5, round);
  CHECK(fixed.batch_sizes() == before);

  lbb::LbbPolicy tuned;
  tuned.start(cluster.view());
  const auto planned = tuned.batch_sizes();
  tuned.observe_round(cluster.run(tuned.plan({0, 0, true, 0.0}), 0, 0, /*cut=*/5));
  CHECK(tuned.stats().skipped_rounds == 1);
  CHECK(tuned.batch_sizes() == planned);
}

TEST_CASE("BOA: fixed within an epoch, re-solved from the epoch's measurements at the next") {
  FakeCluster cluster;
  lbb::BoaPolicy policy;
  policy.start(cluster.view());
  const auto first = policy.batch_sizes();
  CHECK(first[2] == 159);
  CHECK(first[3] == 20);
  CHECK(policy.models()[2].coefficients().size() == 2);  // BOA's linear model

  cluster.extra_ms[2] = 50.0;
  std::int64_t round = 0;
  drive(policy, cluster, 10, round, 0);
  CHECK(policy.batch_sizes() == first);  // no change inside the epoch
  CHECK(policy.rebalances() == 0);

  // Epoch 1: the M40's model keeps a0 = 8.3 and goes through its mean time at 159 samples,
  // (8.3 + 50 + 0.602 * 159 - 8.3) / 159 = 0.9165 ms per sample. Enumeration: (186, 185, 117, 24)
  // at 115.596 ms.
  const auto plan = policy.plan({round, 1, true, 0.0});
  check_plan(plan);
  CHECK(policy.rebalances() == 1);
  CHECK(policy.models()[2].coefficients()[1] == doctest::Approx((50.0 + 0.602 * 159) / 159));
  CHECK(batch_of(plan, 0) + batch_of(plan, 1) == 371);
  CHECK(batch_of(plan, 2) == 117);
  CHECK(batch_of(plan, 3) == 24);
  CHECK(policy.last_allocation().iteration_ms == doctest::Approx(115.596).epsilon(1e-6));
  policy.plan({round + 1, 1, false, 0.0});
  CHECK(policy.rebalances() == 1);
}

TEST_CASE("LB-BSP: batch sizes proportional to the predicted speed") {
  FakeCluster cluster;
  lbb::LbBspPolicy policy;
  policy.start(cluster.view());
  CHECK(policy.batch_sizes() == std::vector<int>{128, 128, 128, 128});
  std::int64_t round = 0;
  drive(policy, cluster, 1, round);
  // Speeds 128 / t: 1.5685, 1.5685, 1.4996, 0.3258 samples/ms -> shares 161.83, 161.83, 154.72,
  // 33.61 -> floors 161, 161, 154, 33 and the 3 left to the largest remainders.
  CHECK(policy.predicted_speeds()[3] == doctest::Approx(128.0 / 392.888));
  CHECK(policy.batch_sizes() == std::vector<int>{162, 162, 155, 33});
  // The second measurement is averaged in with weight 0.5.
  const double v = policy.predicted_speeds()[3];
  drive(policy, cluster, 1, round);
  CHECK(policy.predicted_speeds()[3] == doctest::Approx(0.5 * v + 0.5 * 33.0 / (51.0 + 2.671 * 33)));
  const auto report = drive(policy, cluster, 60, round);
  CHECK(report.straggler_effect < 0.05);
}

// The epoch's short last round ran 3 samples on a worker whose split is 33: at t = 51 + 2.671 B its
// speed reads 0.051 samples/ms against 0.23. Counted, it cut the worker's share at every epoch's
// start; a round that did not run the planned split is passed over, as LBB passes it.
TEST_CASE("LB-BSP: a round that did not run its split (the epoch's short last one) moves nothing") {
  FakeCluster cluster;
  lbb::LbBspPolicy policy;
  policy.start(cluster.view());
  std::int64_t round = 0;
  drive(policy, cluster, 1, round);
  const std::vector<int> split = policy.batch_sizes();
  const std::vector<double> speeds = policy.predicted_speeds();
  env::RoundReport tail;
  const std::vector<int> tail_batches{15, 15, 14, 3};
  for (std::size_t i = 0; i < tail_batches.size(); ++i) {
    env::WorkerRoundStats w;
    w.batch_size = tail_batches[i];
    w.local_steps = 1;
    w.samples = tail_batches[i];
    w.compute_ms = i == 3 ? 51.0 + 2.671 * 3 : 2.0 + 0.6 * tail_batches[i];
    tail.workers.push_back(w);
  }
  tail.epoch_end = true;
  policy.observe_round(tail);
  CHECK(policy.batch_sizes() == split);
  CHECK(policy.predicted_speeds() == speeds);
}

TEST_CASE("LBB under seeded noise: trimmed profiles stay close, and one seed gives one run") {
  const auto run = [](unsigned seed) {
    FakeCluster cluster(seed);
    cluster.noise = 0.05;
    lbb::LbbPolicy policy;
    policy.start(cluster.view());
    std::vector<std::vector<int>> history{policy.batch_sizes()};
    std::int64_t round = 0;
    for (int r = 0; r < 30; ++r) {
      drive(policy, cluster, 1, round);
      history.push_back(policy.batch_sizes());
    }
    CHECK(policy.profiled_allocation().iteration_ms == doctest::Approx(104.462).epsilon(0.03));
    CHECK(policy.profiled_allocation().batch_sizes[3] >= 18);
    CHECK(policy.profiled_allocation().batch_sizes[3] <= 22);
    return history;
  };
  const auto first = run(3);
  CHECK(run(3) == first);
  CHECK(run(4) != first);
}

TEST_CASE("policies reject a cluster that cannot hold the global batch") {
  FakeCluster cluster;
  auto view = cluster.view();
  view.max_batch = {100, 100, 100, 100};
  lbb::LbbPolicy lbb_policy;
  CHECK_THROWS_WITH_AS(lbb_policy.start(view), "LBB: the workers' max batches sum to 400, less than the global batch 512",
                       common::PlanError);
  lbb::BoaPolicy boa;
  CHECK_THROWS_AS(boa.start(view), common::PlanError);
  lbb::LbBspPolicy lb_bsp;
  CHECK_THROWS_AS(lb_bsp.start(view), common::PlanError);
  view = cluster.view();
  view.probe_step_ms = nullptr;
  CHECK_THROWS_WITH_AS(lbb_policy.start(view), "LBB: profiling needs the cluster's probe_step_ms", std::invalid_argument);
  CHECK_THROWS_AS(lbb::LbBspPolicy(lbb::LbBspOptions{0.0}), std::invalid_argument);
}
